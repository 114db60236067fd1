"""A local OpenAI Assistants (v2) server on 127.0.0.1, faithful enough that the real ``openai`` client's
``beta.threads`` calls work against it: threads, messages, runs (polled to a terminal state), run steps with
file search results (their content only when ``include`` asks for it), thread deletion.

Assistants live in ``server.assistants`` (id -> ``Assistant``) with "files": a name and text chunks. A run of an
assistant with ``file_search`` searches them trivially (word overlap with the last user message) and answers from
the best chunk; a run of an assistant without it answers without retrieval.

Faults are chosen when a run is created, as ``assay/testing/faults.py`` says (``x-fault`` header,
``[fault:NAME]`` in the last user message, else ``server.plan``): the generic names act on the run creation
request (``empty`` = a completed run with no assistant message), and the Assistants-specific ones shape the run:
``401``, ``404``, ``run_failed_rate_limit``, ``run_failed_server``, ``run_failed_invalid``, ``run_expired``,
``run_cancelled``, ``run_incomplete``, ``no_search`` (a run that did not search), ``retrieve_garbage`` (the first
poll of the run answers garbage).

Every request is recorded (``server.requests``: method, path, query, headers, JSON body).
"""

import itertools
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from assay.testing.faults import GENERIC_FAULTS, DroppingApp, FaultPlan, generic_fault
from assay.testing.local_app import running_app

RUN_FAULTS = ("run_failed_rate_limit", "run_failed_server", "run_failed_invalid", "run_expired", "run_cancelled",
              "run_incomplete", "no_search", "retrieve_garbage")  # fmt: skip
FAULTS = (*GENERIC_FAULTS, "401", "404", *RUN_FAULTS)
CONTENT_INCLUDE = "step_details.tool_calls[*].file_search.results[*].content"


@dataclass
class AssistantFile:
    name: str
    chunks: list[str]


@dataclass
class Assistant:
    model: str = "gpt-4o-2024-08-06"
    instructions: str = "Answer from the files."
    files: dict[str, AssistantFile] = field(default_factory=dict)
    """file id -> file"""
    file_search: bool = True


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


@dataclass
class AssistantsServer:
    """``api_key`` set: Bearer auth required. ``polls_to_finish``: how many retrievals see the run in progress."""

    assistants: dict[str, Assistant] = field(default_factory=dict)
    api_key: str | None = None
    slow_s: float = 5.0
    retry_after_s: float = 0.0
    polls_to_finish: int = 1
    max_results: int = 3
    plan: list[str | None] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    threads: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._faults = FaultPlan(self.plan)
        self._runs: dict[str, dict[str, Any]] = {}
        self.app = self._build()

    def _id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids):06d}"

    # ----------------------------------------------------------------- routes
    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.middleware("http")
        async def checks(request: Request, call_next: Any) -> Response:
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            query: dict[str, list[str]] = {}
            for key, value in request.query_params.multi_items():
                query.setdefault(key, []).append(value)
            with self._lock:
                self.requests.append(RecordedRequest(request.method, request.url.path, query, dict(request.headers),
                                                     body if isinstance(body, dict) else {}))  # fmt: skip
            if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
                return _error(401, "Incorrect API key provided.", code="invalid_api_key")
            if request.headers.get("openai-beta") != "assistants=v2":
                return _error(400, "You must provide the 'OpenAI-Beta' header to access the Assistants API. Please "
                              "try again by setting the header 'OpenAI-Beta: assistants=v2'.")  # fmt: skip
            return await call_next(request)

        @app.post("/v1/threads")
        async def create_thread(request: Request) -> Response:
            body = await _json(request)
            thread_id = self._id("thread")
            thread = {"id": thread_id, "object": "thread", "created_at": int(time.time()),
                      "metadata": body.get("metadata") or {}, "tool_resources": body.get("tool_resources")}  # fmt: skip
            self.threads[thread_id] = {"thread": thread, "messages": []}
            for message in body.get("messages") or []:
                error = self._add_message(thread_id, message)
                if error is not None:
                    return error
            return JSONResponse(thread)

        @app.post("/v1/threads/{thread_id}/messages")
        async def create_message(thread_id: str, request: Request) -> Response:
            if thread_id not in self.threads:
                return _not_found("thread", thread_id)
            result = self._add_message(thread_id, await _json(request))
            return result if isinstance(result, Response) else JSONResponse(self.threads[thread_id]["messages"][-1])

        @app.get("/v1/threads/{thread_id}/messages")
        async def list_messages(thread_id: str, request: Request) -> Response:
            if thread_id not in self.threads:
                return _not_found("thread", thread_id)
            messages = list(self.threads[thread_id]["messages"])
            run_id = request.query_params.get("run_id")
            if run_id:
                messages = [message for message in messages if message["run_id"] == run_id]
            if request.query_params.get("order", "desc") == "desc":
                messages.reverse()
            return _page(messages[: int(request.query_params.get("limit", 20))])

        @app.post("/v1/threads/{thread_id}/runs")
        async def create_run(thread_id: str, request: Request) -> Response:
            if thread_id not in self.threads:
                return _not_found("thread", thread_id)
            body = await _json(request)
            last_user = next((m for m in reversed(self.threads[thread_id]["messages"]) if m["role"] == "user"), None)
            prompt = last_user["content"][0]["text"]["value"] if last_user else ""
            fault = self._faults.next(request, prompt)
            if fault is not None and fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
            if fault == "401":
                return _error(401, "Incorrect API key provided.", code="invalid_api_key")
            faulted = await generic_fault(fault, request, _generic_error, retry_after_s=self.retry_after_s,
                                          slow_s=self.slow_s)  # fmt: skip
            if faulted is not None:
                return faulted
            assistant_id = body.get("assistant_id")
            if not isinstance(assistant_id, str) or not assistant_id:
                return _error(400, "Missing required parameter: 'assistant_id'.", param="assistant_id")
            if fault == "404" or assistant_id not in self.assistants:
                return _error(404, f"No assistant found with id '{assistant_id}'.")
            run = self._start_run(thread_id, assistant_id, body, prompt, fault)
            return JSONResponse(run["run"])

        @app.get("/v1/threads/{thread_id}/runs/{run_id}")
        async def retrieve_run(thread_id: str, run_id: str) -> Response:
            state = self._runs.get(run_id)
            if state is None or state["run"]["thread_id"] != thread_id:
                return _not_found("run", run_id)
            if state["fault"] == "retrieve_garbage" and not state.get("garbage_sent"):
                state["garbage_sent"] = True
                return PlainTextResponse("<html>502 Bad Gateway</html>{not json", media_type="application/json")
            state["polls"] += 1
            if state["polls"] > self.polls_to_finish and state["run"]["status"] in ("queued", "in_progress"):
                self._finish_run(state)
            elif state["run"]["status"] == "queued":
                state["run"]["status"] = "in_progress"
                state["run"]["started_at"] = int(time.time())
            return JSONResponse(state["run"])

        @app.get("/v1/threads/{thread_id}/runs/{run_id}/steps")
        async def list_steps(thread_id: str, run_id: str, request: Request) -> Response:
            state = self._runs.get(run_id)
            if state is None or state["run"]["thread_id"] != thread_id:
                return _not_found("run", run_id)
            include = request.query_params.getlist("include[]") + request.query_params.getlist("include")
            steps = [self._step_view(step, CONTENT_INCLUDE in include) for step in state["steps"]]
            if request.query_params.get("order", "desc") == "desc":
                steps.reverse()
            return _page(steps)

        @app.delete("/v1/threads/{thread_id}")
        async def delete_thread(thread_id: str) -> Response:
            if self.threads.pop(thread_id, None) is None:
                return _not_found("thread", thread_id)
            self.deleted.append(thread_id)
            return JSONResponse({"id": thread_id, "object": "thread.deleted", "deleted": True})

        return app

    # ------------------------------------------------------------------ state
    def _add_message(self, thread_id: str, body: dict[str, Any], **fields: Any) -> Response | None:
        role, content = body.get("role"), body.get("content")
        if role not in ("user", "assistant"):
            return _error(400, f"Invalid value: '{role}'. Supported values are: 'user' and 'assistant'.", param="role")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        if not isinstance(content, str) or not content:
            return _error(400, "Invalid 'content': string too short.", param="content")
        self.threads[thread_id]["messages"].append(self._message(thread_id, role, content, **fields))
        return None

    def _message(self, thread_id: str, role: str, text: str, assistant_id: str | None = None,
                 run_id: str | None = None) -> dict[str, Any]:  # fmt: skip
        now = int(time.time())
        return {"id": self._id("msg"), "object": "thread.message", "created_at": now, "assistant_id": assistant_id,
                "thread_id": thread_id, "run_id": run_id, "role": role, "status": "completed", "completed_at": now,
                "incomplete_at": None, "incomplete_details": None, "attachments": [], "metadata": {},
                "content": [{"type": "text", "text": {"value": text, "annotations": []}}]}  # fmt: skip

    def _start_run(self, thread_id: str, assistant_id: str, body: dict[str, Any], prompt: str,
                   fault: str | None) -> dict[str, Any]:  # fmt: skip
        assistant = self.assistants[assistant_id]
        now = int(time.time())
        run = {
            "id": self._id("run"), "object": "thread.run", "created_at": now, "assistant_id": assistant_id,
            "thread_id": thread_id, "status": "queued", "started_at": None, "expires_at": now + 600,
            "cancelled_at": None, "failed_at": None, "completed_at": None, "required_action": None,
            "last_error": None, "model": body.get("model") or assistant.model,
            "instructions": body.get("instructions") or assistant.instructions,
            "tools": body.get("tools") or ([{"type": "file_search"}] if assistant.file_search else []),
            "metadata": body.get("metadata") or {}, "usage": None, "temperature": body.get("temperature", 1.0),
            "top_p": body.get("top_p", 1.0), "max_prompt_tokens": body.get("max_prompt_tokens"),
            "max_completion_tokens": body.get("max_completion_tokens"),
            "truncation_strategy": {"type": "auto", "last_messages": None}, "incomplete_details": None,
            "response_format": "auto", "tool_choice": "auto", "parallel_tool_calls": True,
        }  # fmt: skip
        state = {"run": run, "fault": fault, "prompt": prompt, "polls": 0, "steps": []}
        self._runs[run["id"]] = state
        return state

    def _search(self, assistant: Assistant, prompt: str) -> list[dict[str, Any]]:
        query = _words(prompt)
        hits = []
        for file_id, file in assistant.files.items():
            for chunk in file.chunks:
                overlap = len(query & _words(chunk))
                if overlap:
                    hits.append({"file_id": file_id, "file_name": file.name, "score": round(overlap / len(query), 4),
                                 "content": [{"type": "text", "text": chunk}]})  # fmt: skip
        hits.sort(key=lambda hit: -hit["score"])
        return hits[: self.max_results]

    def _finish_run(self, state: dict[str, Any]) -> None:
        run, fault = state["run"], state["fault"]
        now = int(time.time())
        failures = {"run_failed_rate_limit": ("rate_limit_exceeded", "Rate limit reached for gpt-4o."),
                    "run_failed_server": ("server_error", "Sorry, something went wrong."),
                    "run_failed_invalid": ("invalid_prompt", "The prompt was flagged.")}  # fmt: skip
        if fault in failures:
            code, message = failures[fault]
            run.update(status="failed", failed_at=now, last_error={"code": code, "message": message})
            return
        if fault == "run_expired":
            run.update(status="expired")
            return
        if fault == "run_cancelled":
            run.update(status="cancelled", cancelled_at=now)
            return
        if fault == "run_incomplete":
            run.update(status="incomplete", incomplete_details={"reason": "max_completion_tokens"})
            return
        assistant = self.assistants[run["assistant_id"]]
        thread = self.threads.get(run["thread_id"])
        results = self._search(assistant, state["prompt"]) if assistant.file_search and fault != "no_search" else []
        base = {"object": "thread.run.step", "created_at": now, "run_id": run["id"],
                "assistant_id": run["assistant_id"], "thread_id": run["thread_id"], "status": "completed",
                "cancelled_at": None, "completed_at": now, "expired_at": None, "failed_at": None,
                "last_error": None, "metadata": {}}  # fmt: skip
        if assistant.file_search and fault != "no_search":
            tool_call = {"id": self._id("call"), "type": "file_search",
                         "file_search": {"ranking_options": {"ranker": "default_2024_08_21", "score_threshold": 0.0},
                                         "results": results}}  # fmt: skip
            state["steps"].append({**base, "id": self._id("step"), "type": "tool_calls", "usage": None,
                                   "step_details": {"type": "tool_calls", "tool_calls": [tool_call]}})  # fmt: skip
        answer = ""
        if fault != "empty":
            if results:
                answer = f"According to {results[0]['file_name']}: {results[0]['content'][0]['text']}"
            else:
                answer = "I could not find this in the files."
            if thread is not None:
                message = self._message(run["thread_id"], "assistant", answer, run["assistant_id"], run["id"])
                thread["messages"].append(message)
                details = {"type": "message_creation", "message_creation": {"message_id": message["id"]}}
                state["steps"].append(
                    {**base, "id": self._id("step"), "type": "message_creation", "usage": None, "step_details": details}
                )
        history = thread["messages"] if thread is not None else []
        prompt_tokens = sum(len(m["content"][0]["text"]["value"].split()) for m in history if m["run_id"] is None)
        prompt_tokens += sum(len(hit["content"][0]["text"].split()) for hit in results)
        completion_tokens = len(answer.split())
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}  # fmt: skip
        run.update(status="completed", completed_at=now, usage=usage)

    @staticmethod
    def _step_view(step: dict[str, Any], with_content: bool) -> dict[str, Any]:
        if with_content or step["type"] != "tool_calls":
            return step
        calls = []
        for call in step["step_details"]["tool_calls"]:
            results = [{key: value for key, value in result.items() if key != "content"}
                       for result in call["file_search"]["results"]]  # fmt: skip
            calls.append({**call, "file_search": {**call["file_search"], "results": results}})
        return {**step, "step_details": {"type": "tool_calls", "tool_calls": calls}}


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _page(data: list[dict[str, Any]]) -> Response:
    return JSONResponse({"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                         "last_id": data[-1]["id"] if data else None, "has_more": False})  # fmt: skip


def _error(status: int, message: str, *, code: str | None = None, param: str | None = None,
           headers: dict[str, str] | None = None) -> Response:  # fmt: skip
    kind = {429: "rate_limit_error"}.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status, headers=headers)  # fmt: skip


def _not_found(what: str, ident: str) -> Response:
    return _error(404, f"No {what} found with id '{ident}'.")


def _generic_error(status: int, message: str, headers: dict[str, str] | None) -> Response:
    return _error(status, message, headers=headers)


@contextmanager
def serve_assistants(server: AssistantsServer | None = None) -> Iterator[AssistantsServer]:
    """Run ``server`` on a free 127.0.0.1 port; ``server.url`` is its base URL (``http://127.0.0.1:PORT/v1``)."""
    server = server or AssistantsServer()
    with running_app(DroppingApp(server.app), lifespan="off") as base_url:
        server.url = f"{base_url}/v1"
        yield server
