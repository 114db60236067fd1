"""A local Ollama server on 127.0.0.1, faithful enough that the real ``ollama`` client talks to it, with faults
injected on demand.

Endpoints: ``POST /api/chat`` (a JSON reply when the request says ``"stream": false``, else NDJSON chunks as
Ollama streams by default), ``GET /api/tags``, ``GET /api/version``. Errors are Ollama's ``{"error": "..."}``;
an unknown model answers 404 ``model "x" not found, try pulling it first``.

Faults are chosen per request as ``assay/testing/faults.py`` says (header, ``[fault:NAME]`` in the last message,
else ``server.plan``). Besides the generic names (``empty`` = ``message.content`` "" with ``done`` true):
``401``, ``403``, ``404``, ``400``, ``not_object`` (a JSON list), ``no_message`` (a JSON object without
``message``).

Every request is recorded (``server.requests``: headers, JSON body) so tests can assert what the client sent.
"""

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from assay.testing.faults import GENERIC_FAULTS, DroppingApp, FaultPlan, generic_fault
from assay.testing.local_app import running_app

FAULTS = (*GENERIC_FAULTS, "401", "403", "404", "400", "not_object", "no_message")
VERSION = "0.12.6"


@dataclass
class RecordedRequest:
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class OllamaServer:
    """Serves ``models`` (other names answer 404); ``api_key`` set: Bearer auth required (a proxy in front)."""

    models: tuple[str, ...] = ("llama3.2",)
    api_key: str | None = None
    slow_s: float = 5.0
    retry_after_s: float = 0.0
    plan: list[str | None] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    url: str = ""

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

        @app.get("/api/version")
        async def version() -> Response:
            return JSONResponse({"version": VERSION})

        @app.get("/api/tags")
        async def tags() -> Response:
            return JSONResponse({"models": [_tag(name) for name in self.models]})

        @app.post("/api/chat")
        async def chat(request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                return _error(400, "invalid character 'x' looking for beginning of value")
            with self._lock:
                self.requests.append(RecordedRequest(dict(request.headers), body if isinstance(body, dict) else {}))
            if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
                return _error(401, "unauthorized")
            if not isinstance(body, dict):
                return _error(400, "json: cannot unmarshal array into Go value of type api.ChatRequest")
            fault = self._next_fault(request, body)
            faulted = await self._fault(fault, request)
            if faulted is not None:
                return faulted
            model = body.get("model")
            if not isinstance(model, str) or not model:
                return _error(400, "model is required")
            if model.removesuffix(":latest") not in self.models:
                return _error(404, f'model "{model}" not found, try pulling it first')
            messages = body.get("messages")
            if not isinstance(messages, list) or not all(
                isinstance(m, dict) and m.get("role") in ("system", "user", "assistant", "tool") for m in messages
            ):
                return _error(400, "invalid message format")
            prompt = messages[-1].get("content", "") if messages else ""
            answer = "" if fault == "empty" else f"echo: {prompt}"
            prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in messages)
            final = {
                "model": model,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
                "message": {"role": "assistant", "content": answer},
                "done": True,
                "done_reason": "stop",
                "total_duration": 1_500_000,
                "load_duration": 200_000,
                "prompt_eval_count": prompt_tokens,
                "prompt_eval_duration": 300_000,
                "eval_count": len(answer.split()),
                "eval_duration": 1_000_000,
            }
            if fault == "no_message":
                final.pop("message")
            if body.get("stream", True) is False:
                return JSONResponse(final)
            return StreamingResponse(_stream(final), media_type="application/x-ndjson")

        return app

    async def _fault(self, fault: str | None, request: Request) -> Response | None:
        if fault is None or fault in ("empty", "no_message"):
            return None
        if fault in ("401", "403"):
            return _error(int(fault), "unauthorized" if fault == "401" else "forbidden")
        if fault == "404":
            return _error(404, 'model "gone" not found, try pulling it first')
        if fault == "400":
            return _error(400, "invalid options")
        if fault == "not_object":
            return JSONResponse([1, 2, 3])
        if fault not in GENERIC_FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
        return await generic_fault(fault, request, _generic_error, retry_after_s=self.retry_after_s, slow_s=self.slow_s)


async def _stream(final: dict[str, Any]) -> AsyncIterator[bytes]:
    """Ollama's streaming shape: one chunk per word (``done`` false), then the final chunk with the counts."""
    message = final.get("message") or {}
    for word in str(message.get("content", "")).split(" "):
        chunk = {"model": final["model"], "created_at": final["created_at"],
                 "message": {"role": "assistant", "content": word + " "}, "done": False}  # fmt: skip
        yield (json.dumps(chunk) + "\n").encode()
        await asyncio.sleep(0)
    last = {**final, "message": {"role": "assistant", "content": ""}} if "message" in final else final
    yield (json.dumps(last) + "\n").encode()


def _tag(name: str) -> dict[str, Any]:
    return {
        "name": f"{name}:latest",
        "model": f"{name}:latest",
        "modified_at": "2026-01-01T00:00:00Z",
        "size": 2_019_393_189,
        "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
        "details": {"format": "gguf", "family": "llama", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"},
    }


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _generic_error(status: int, message: str, headers: dict[str, str] | None) -> Response:
    return _error(status, message, headers)


@contextmanager
def serve_ollama(server: OllamaServer | None = None) -> Iterator[OllamaServer]:
    """Run ``server`` on a free 127.0.0.1 port; ``server.url`` is its base URL (``http://127.0.0.1:PORT``)."""
    server = server or OllamaServer()
    with running_app(DroppingApp(server.app), lifespan="off") as base_url:
        server.url = base_url
        yield server
