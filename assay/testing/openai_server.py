"""A local OpenAI chat completions server on 127.0.0.1, faithful enough that the real ``openai`` client talks
to it, with faults injected on demand.

Faults are chosen per request as ``assay/testing/faults.py`` says (header, ``[fault:NAME]`` in the last user
message, else ``server.plan``). Besides the generic names (``empty`` = an empty ``choices`` list): ``401``,
``404``, ``400``, ``empty_choices``, ``empty_content``, ``not_object`` (a JSON list).

Every request is recorded (``server.requests``: headers, JSON body) so tests can assert what the client sent.

Azure OpenAI's route is served too: ``POST /openai/deployments/{deployment}/chat/completions?api-version=...``
with an ``api-key`` header (401 when ``azure_api_key`` is set and the header is missing or wrong), 400 without
``api-version``, 404 ``DeploymentNotFound`` for a deployment not in ``azure_deployments`` (deployment -> the model
name the reply reports). Azure requests record their path and query too.
"""

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from assay.testing.faults import GENERIC_FAULTS, DroppingApp, FaultPlan, generic_fault
from assay.testing.local_app import running_app
from assay.testing.secrets import derived_copies

FAULTS = (*GENERIC_FAULTS, "401", "401_echo", "404", "400", "empty_choices", "empty_content", "not_object")


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[Any] | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1)
    messages: list[Message] = Field(min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)


@dataclass
class RecordedRequest:
    headers: dict[str, str]
    body: dict[str, Any]
    path: str = ""
    query: dict[str, str] = field(default_factory=dict)


@dataclass
class OpenAIServer:
    """Serves ``models`` (other names answer 404 model_not_found); ``api_key`` set: Bearer auth required."""

    models: tuple[str, ...] = ("local-model",)
    api_key: str | None = None
    slow_s: float = 5.0
    latency_s: float = 0.0
    retry_after_s: float = 0.0
    plan: list[str | None] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    url: str = ""
    azure_deployments: dict[str, str] = field(default_factory=lambda: {"gpt-4o-prod": "gpt-4o-2024-08-06"})
    azure_api_key: str | None = None
    responder: Callable[[dict[str, Any]], dict[str, Any] | Response] | None = None
    """Builds the reply message from the request body (a rule-based judge); None: the answer echoes the prompt.
    It returns the message's fields (``content``, ``refusal``, ``tool_calls``) or a whole error response."""
    usage_details: dict[str, Any] = field(default_factory=dict)
    """Added to every reply's ``usage``, as OpenAI reports cache reads and reasoning:
    ``{"prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 2}}``."""
    azure_url: str = ""
    """The Azure endpoint (``http://127.0.0.1:PORT``), what ``AzureOpenAI(azure_endpoint=...)`` takes."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._faults = FaultPlan(self.plan)
        self.app = self._build()

    def _next_fault(self, request: Request, body: dict[str, Any]) -> str | None:
        messages = body.get("messages") or []
        last = messages[-1].get("content") if messages and isinstance(messages[-1], dict) else None
        return self._faults.next(request, last if isinstance(last, str) else None)

    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                return _error(400, "invalid_request_error", "We could not parse the JSON body of your request.")
            with self._lock:
                self.requests.append(RecordedRequest(dict(request.headers), body if isinstance(body, dict) else {}))
            if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
                return _error(401, "invalid_request_error", "Incorrect API key provided.", code="invalid_api_key")
            if not isinstance(body, dict):
                return _error(400, "invalid_request_error", "The request body must be a JSON object.")
            if self.latency_s:
                await asyncio.sleep(self.latency_s)  # a model's time to answer, for throughput benchmarks
            fault = self._next_fault(request, body)
            faulted = await self._fault(fault, request)
            if faulted is not None:
                return faulted
            try:
                chat = ChatRequest.model_validate(body)
            except Exception as error:  # reported to the client, as OpenAI does
                return _error(400, "invalid_request_error", f"Invalid request: {error}")
            if chat.model not in self.models:
                return _error(404, "invalid_request_error", f"The model `{chat.model}` does not exist.",
                              code="model_not_found")  # fmt: skip
            return self._reply(chat, fault, f"{chat.model}-2026-01-01")

        @app.post("/openai/deployments/{deployment}/chat/completions")
        async def azure_completions(deployment: str, request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                return _azure_error(400, "BadRequest", "We could not parse the JSON body of your request.")
            with self._lock:
                self.requests.append(
                    RecordedRequest(dict(request.headers), body if isinstance(body, dict) else {},
                                    request.url.path, dict(request.query_params))
                )  # fmt: skip
            if self.azure_api_key is not None and request.headers.get("api-key") != self.azure_api_key:
                return _azure_error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. "
                                    "Make sure to provide a valid key for an active subscription.")  # fmt: skip
            if not request.query_params.get("api-version"):
                return _azure_error(400, "BadRequest", "Missing API version parameter.")
            if deployment not in self.azure_deployments:
                return _azure_error(404, "DeploymentNotFound", "The API deployment for this resource does not exist. "
                                    "If you created the deployment within the last 5 minutes, please wait a moment "
                                    "and try again.")  # fmt: skip
            if not isinstance(body, dict):
                return _azure_error(400, "BadRequest", "The request body must be a JSON object.")
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            fault = self._next_fault(request, body)
            faulted = await self._fault(fault, request)
            if faulted is not None:
                return faulted
            try:
                chat = ChatRequest.model_validate({"model": deployment, **body})
            except Exception as error:
                return _azure_error(400, "BadRequest", f"Invalid request: {error}")
            return self._reply(chat, fault, self.azure_deployments[deployment])

        return app

    def _reply(self, chat: ChatRequest, fault: str | None, model_name: str) -> Response:
        prompt = chat.messages[-1].content if isinstance(chat.messages[-1].content, str) else ""
        answer = f"echo: {prompt}" if fault != "empty_content" else ""
        message: dict[str, Any] = {"role": "assistant", "content": answer}
        if self.responder is not None and fault not in ("empty_content", "empty", "empty_choices"):
            built = self.responder(chat.model_dump())
            if isinstance(built, Response):
                return built
            message = {"role": "assistant", "content": None} | built
            answer = message.get("content") or json.dumps(message.get("tool_calls") or message.get("refusal") or "")
        prompt_tokens = sum(len(str(message.content or "").split()) for message in chat.messages)
        choices = [] if fault in ("empty", "empty_choices") else [
            {"index": 0, "message": message, "finish_reason": "stop",
             "logprobs": None}
        ]  # fmt: skip
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model_name,
                "choices": choices,
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(answer.split()),
                    "total_tokens": prompt_tokens + len(answer.split()),
                    **self.usage_details,
                },
            }
        )

    async def _fault(self, fault: str | None, request: Request) -> Response | None:
        if fault is None or fault in ("empty", "empty_choices", "empty_content"):
            return None
        if fault == "401":
            return _error(401, "invalid_request_error", "Incorrect API key provided.", code="invalid_api_key")
        if fault == "401_echo":  # as some gateways do: the rejected key in the error body, in full and in the
            # derived copies an audit found stored: cut short, upper-cased, split by zero-width characters or spaces
            key = request.headers.get("authorization", "").removeprefix("Bearer ")
            message = f"Incorrect API key provided: {key} (seen as {', '.join(derived_copies(key))})."
            return _error(401, "invalid_request_error", message, code="invalid_api_key")
        if fault == "404":
            return _error(404, "invalid_request_error", "The model does not exist.", code="model_not_found")
        if fault == "400":
            return _error(400, "invalid_request_error", "Bad request.")
        if fault == "not_object":
            return JSONResponse([1, 2, 3])
        if fault not in GENERIC_FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
        return await generic_fault(
            fault, request, _generic_error, retry_after_s=self.retry_after_s, slow_s=self.slow_s
        )


def _error(status: int, kind: str, message: str, code: str | None = None, headers: dict[str, str] | None = None):
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status, headers=headers
    )


def _azure_error(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _generic_error(status: int, message: str, headers: dict[str, str] | None) -> Response:
    kind = {429: "rate_limit_error"}.get(status, "server_error")
    return _error(status, kind, message, headers=headers)


@contextmanager
def serve_openai(server: OpenAIServer | None = None) -> Iterator[OpenAIServer]:
    """Run ``server`` on a free 127.0.0.1 port; ``server.url`` is its base URL (``http://127.0.0.1:PORT/v1``)."""
    server = server or OpenAIServer()
    with running_app(DroppingApp(server.app), lifespan="off") as base_url:
        server.url = f"{base_url}/v1"
        server.azure_url = base_url
        yield server
