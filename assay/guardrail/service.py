"""The guardrail service: ``POST /check`` applies a ``Guard`` to one live answer (FastAPI, served by uvicorn).

- Models load once, in a background thread at start-up: ``/healthz`` answers at once (the process is up),
  ``/readyz`` and ``/check`` answer 503 until the guard is warm, so an orchestrator routes no traffic to a
  replica that would spend seconds loading a model inside a user's request.
- ``/check`` is a plain ``def`` endpoint: FastAPI runs it in its thread pool, so the CPU-bound checks never
  block the event loop that keeps accepting requests and answering health probes.
- Request bodies are limited (1 MiB by default) before they are parsed: a larger body gets a JSON 413.
- One JSON log line per request with its id, status, verdict, latency and the *lengths* of what was
  checked, never the text itself: the checked answers are customers' conversations.
"""

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from assay.guardrail.checks import Guard
from assay.models.guardrail import CheckRequest, CheckResult

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
CONFIG_ENV = "ASSAY_GUARDRAIL_CONFIG"
MAX_BODY_ENV = "ASSAY_GUARDRAIL_MAX_BODY_BYTES"
logger = logging.getLogger("assay.guardrail")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _log_json(**fields: Any) -> None:
    logger.info(json.dumps(fields, sort_keys=True))


def _ensure_log_handler() -> None:
    """Request logs go to standard error as bare JSON lines unless the host application configured logging."""
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


class RequestGate:
    """ASGI middleware: assigns the request id, enforces the body limit before parsing, logs one line."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        request_id = headers.get("x-request-id", "")[:64] or uuid.uuid4().hex
        state: dict[str, Any] = scope.setdefault("state", {})
        status = {"code": 500}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        body = await self._read_limited(headers, receive)
        try:
            if body is None:
                response = JSONResponse(
                    {"error": f"request body larger than the limit of {self.max_body_bytes} bytes"}, status_code=413
                )
                await response(scope, receive, send_with_id)
            else:
                await self.app(scope, _replay(body, receive), send_with_id)
        finally:
            _log_json(
                event="request",
                request_id=request_id,
                method=scope["method"],
                path=scope["path"],
                status=status["code"],
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
                body_bytes=None if body is None else len(body),
                **state.get("check_log", {}),
            )

    async def _read_limited(self, headers: dict[str, str], receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it is known to exceed the limit (declared or streamed)."""
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            return None
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def create_app(
    config: str | Path | Guard, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, warm_up: bool = True
) -> FastAPI:
    """The service for a configuration file or an already built guard; ``warm_up=False`` leaves warming to
    the caller (tests that built and warmed the guard themselves)."""
    guard = config if isinstance(config, Guard) else Guard.from_path(config)
    _ensure_log_handler()
    warm_up_error: dict[str, str] = {}

    def warm() -> None:
        started = time.perf_counter()
        try:
            guard.warm_up()
        except Exception as error:  # readiness stays false and says why; the process stays up for probes
            warm_up_error["reason"] = f"{type(error).__name__}: {error}"
            _log_json(event="warm_up_failed", reason=warm_up_error["reason"])
            return
        _log_json(event="ready", warm_up_ms=round((time.perf_counter() - started) * 1000, 1))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if warm_up and not guard.ready:
            threading.Thread(target=warm, name="guardrail-warm-up", daemon=True).start()
        yield

    app = FastAPI(title="Assay guardrail", summary="Seed 002's real-time safety shield", version="1", lifespan=lifespan)
    app.add_middleware(RequestGate, max_body_bytes=max_body_bytes)

    def not_ready() -> JSONResponse:
        reason = warm_up_error.get("reason", "loading models")
        return JSONResponse({"ready": False, "error": f"guardrail not ready: {reason}"}, status_code=503)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", response_model=None)
    def readyz() -> dict[str, Any] | JSONResponse:
        if not guard.ready:
            return not_ready()
        return {"ready": True, "evaluators": guard.evaluator_ids, "config_sha256": guard.identity.sha256}

    @app.post("/check", response_model=None, responses={200: {"model": CheckResult}})
    def check(payload: CheckRequest, request: Request) -> Response:
        context = payload.context or []
        request.state.check_log = {
            "question_chars": len(payload.question),
            "answer_chars": len(payload.answer),
            "context_chunks": len(context),
            "context_chars": sum(len(chunk) for chunk in context),
        }
        if not guard.ready:
            return not_ready()
        result = guard.check(payload.question, payload.answer, context or None)
        request.state.check_log |= {"verdict": result.verdict, "check_ms": result.elapsed_ms}
        return Response(result.model_dump_json(), media_type="application/json")

    return app


def app_from_environment() -> FastAPI:
    """The factory ``uvicorn --factory`` calls in each worker process (``assay guardrail serve --workers N``)."""
    return create_app(os.environ[CONFIG_ENV], max_body_bytes=int(os.environ.get(MAX_BODY_ENV, DEFAULT_MAX_BODY_BYTES)))
