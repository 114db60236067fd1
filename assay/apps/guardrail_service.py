"""The guardrail service: ``POST /check`` applies a ``Guard`` to one live answer (FastAPI, served by uvicorn).

- Models load once, in a background thread at start-up: ``/healthz`` answers at once (the process is up),
  ``/readyz`` and ``/check`` answer 503 until the guard is warm, so an orchestrator routes no traffic to a
  replica that would spend seconds loading a model inside a user's request.
- ``/check`` runs the CPU-bound checks in the thread pool, so they never block the event loop that keeps
  accepting requests and answering health probes.
- What one request may cost is bounded, each refusal a JSON body whose ``error`` says why: the body (1 MiB by
  default) before it is parsed (413); strict JSON, so ``NaN`` and ``Infinity`` are refused like any invalid
  input (422, never a 500); the context items and total characters (422, ``ServiceLimits`` in the
  configuration's ``service`` key); and the check's time (503 when it ran past its budget and was stopped: the
  request was acceptable, the service could not finish it in time, and no verdict from a partial check is sent).
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
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from assay.budget import TimeBudgetExceeded
from assay.guardrail.checks import Guard
from assay.guardrail.config import ServiceLimits
from assay.jsonio import JSONInputError, strict_loads
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

    limits = guard.config.limits
    budget = limits.check_budget_s
    checks_at_once = anyio.CapacityLimiter(limits.concurrent_checks)

    @app.post("/check", response_model=None, responses=CHECK_RESPONSES, openapi_extra=CHECK_REQUEST_BODY)
    async def check(request: Request) -> Response:
        try:
            payload = parse_check_request(await request.body())
        except InvalidRequest as invalid:
            return JSONResponse(invalid.body, status_code=422)
        context = payload.context or []
        request.state.check_log = {
            "question_chars": len(payload.question),
            "answer_chars": len(payload.answer),
            "context_chunks": len(context),
            "context_chars": sum(len(chunk) for chunk in context),
        }
        if (too_big := over_limits(request.state.check_log, limits)) is not None:
            return JSONResponse({"error": too_big}, status_code=422)
        if not guard.ready:
            return not_ready()
        arrived = time.perf_counter()
        with anyio.move_on_after(budget) as waiting:
            await checks_at_once.acquire()
        if waiting.cancelled_caught:  # as many checks ahead as the budget allows: shed, do not queue forever
            request.state.check_log |= {"verdict": None, "stopped": "busy"}
            error = f"the service is busy: no check could start within the time budget of {budget:g} s"
            return JSONResponse({"error": f"{error}; retry later"}, status_code=503)
        left = max(budget - (time.perf_counter() - arrived), 0.001)
        try:
            result = await anyio.to_thread.run_sync(
                # one budget for the request: the time it waited for its turn is spent
                partial(guard.check, payload.question, payload.answer, context or None, time_budget_s=left)
            )
        except TimeBudgetExceeded:
            request.state.check_log |= {"verdict": None, "stopped": "time budget"}
            stopped = f"the check ran past its time budget of {budget:g} s (its wait included) and was stopped"
            return JSONResponse({"error": f"{stopped}; send less context or retry later"}, status_code=503)
        finally:
            checks_at_once.release()
        request.state.check_log |= {"verdict": result.verdict, "check_ms": result.elapsed_ms}
        return Response(result.model_dump_json(), media_type="application/json")

    return app


CHECK_REQUEST_BODY = {
    "requestBody": {"required": True, "content": {"application/json": {"schema": CheckRequest.model_json_schema()}}}
}
CHECK_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": CheckResult},
    413: {"description": "The body is larger than the limit."},
    422: {"description": "Invalid JSON or request, or over the item or text limits; `error` says which."},
    503: {"description": "Not ready yet, or the check ran past its time budget."},
}
MAX_REPORTED_ERRORS = 10


class InvalidRequest(ValueError):
    """A ``/check`` body that is not a valid request; ``body`` is the 422 answer (never the input echoed)."""

    def __init__(self, error: str, detail: list[dict[str, Any]] | None = None) -> None:
        super().__init__(error)
        self.body: dict[str, Any] = {"error": error} | ({"detail": detail} if detail else {})


def parse_check_request(body: bytes) -> CheckRequest:
    """Strict JSON (``strict_loads``: no NaN or Infinity, no repeated key whose last value would win, no lone
    surrogate), as every other entry point reads it, into a ``CheckRequest``."""
    try:
        data = strict_loads(body.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, JSONInputError) as error:
        raise InvalidRequest(f"invalid JSON: {error}") from None
    except RecursionError:
        raise InvalidRequest("invalid JSON: nested too deeply") from None
    try:
        return CheckRequest.model_validate(data)
    except ValidationError as error:
        problems = error.errors(include_url=False, include_context=False, include_input=False)
        shown = problems[:MAX_REPORTED_ERRORS]
        where = "; ".join(f"{'.'.join(map(str, problem['loc'])) or 'body'}: {problem['msg']}" for problem in shown)
        more = f" (and {len(problems) - len(shown)} more)" if len(problems) > len(shown) else ""
        raise InvalidRequest(f"invalid request: {where}{more}", shown) from None


def over_limits(sizes: dict[str, int], limits: ServiceLimits) -> str | None:
    """Why a request of these sizes is refused, or None when it is within ``limits``."""
    if sizes["context_chunks"] > limits.max_context_items:
        return (
            f"context has {sizes['context_chunks']} items; the limit is {limits.max_context_items} "
            "(service.max_context_items in the guardrail configuration)"
        )
    total = sizes["question_chars"] + sizes["answer_chars"] + sizes["context_chars"]
    if total > limits.max_text_chars:
        return (
            f"question, answer and context hold {total} characters; the limit is {limits.max_text_chars} "
            "(service.max_text_chars in the guardrail configuration)"
        )
    return None


def app_from_environment() -> FastAPI:
    """The factory ``uvicorn --factory`` calls in each worker process (``assay guardrail serve --workers N``)."""
    return create_app(os.environ[CONFIG_ENV], max_body_bytes=int(os.environ.get(MAX_BODY_ENV, DEFAULT_MAX_BODY_BYTES)))
