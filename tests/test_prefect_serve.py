"""The Prefect server's retry of requests refused on a locked database (``assay.apps.prefect_serve``), with a
stand-in ASGI app: a 503 is replayed with the same body until it succeeds or the tries run out; other
answers, and websockets, pass through once."""

import asyncio
from typing import Any

import pytest

from assay.apps.prefect_serve import RetryWhenLocked


class Locked:
    """Answers 503 ``locked`` times, then 201 echoing the body it was given; records every body it read."""

    def __init__(self, locked: int, status: int = 201) -> None:
        self.locked, self.status, self.bodies = locked, status, []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.accept"})
            return
        message = await receive()
        self.bodies.append(message["body"])
        status = 503 if len(self.bodies) <= self.locked else self.status
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"locked" if status == 503 else message["body"]})
        if status == 503:  # as Starlette's ServerErrorMiddleware does after sending the handler's answer
            raise RuntimeError("database is locked")


def _call(app: Any, scope: dict[str, Any], body: bytes = b"", sent: list | None = None) -> list[dict[str, Any]]:
    """Run one request through ``app``; what it sent (into ``sent`` when given, so a raising app's answer is
    still seen)."""
    chunks = [body[:3], body[3:]]

    async def receive() -> dict[str, Any]:
        if chunks:
            part = chunks.pop(0)
            return {"type": "http.request", "body": part, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    sent = [] if sent is None else sent

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


HTTP = {"type": "http", "method": "POST", "path": "/api/flow_runs/1/resume"}


def test_a_locked_request_is_replayed_with_its_body_until_it_succeeds() -> None:
    inner = Locked(locked=2)
    sent = _call(RetryWhenLocked(inner, first_pause_s=0.001), HTTP, b'{"run_input": {"reviewer": "Ada"}}')
    assert inner.bodies == [b'{"run_input": {"reviewer": "Ada"}}'] * 3
    assert [message.get("status") for message in sent] == [201, None]  # only the last try reached the caller
    assert sent[1]["body"] == b'{"run_input": {"reviewer": "Ada"}}'


def test_the_last_503_is_given_to_the_caller_when_the_tries_run_out() -> None:
    inner = Locked(locked=10)
    sent: list[dict[str, Any]] = []
    with pytest.raises(RuntimeError, match="locked"):  # the last try's exception goes on to the server, as before
        sent = _call(RetryWhenLocked(inner, attempts=3, first_pause_s=0.001), HTTP, b"x", sent)
    assert len(inner.bodies) == 3
    assert [message.get("status") for message in sent] == [503, None] and sent[1]["body"] == b"locked"


def test_a_real_starlette_app_answering_503_on_a_locked_database_is_replayed() -> None:
    """Prefect's app: its exception handler answers 503 and Starlette raises the exception after sending it."""
    import sqlite3

    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    app, api = FastAPI(), FastAPI()
    app.mount("/api", api)  # as Prefect mounts its API: routing writes the mount into the scope
    calls: list[bytes] = []

    @api.exception_handler(Exception)
    async def unavailable(request: Any, exc: Exception) -> JSONResponse:
        return JSONResponse({"exception_message": "Service Unavailable"}, status_code=503)

    @api.post("/flow_runs/{run_id}/resume")
    async def resume(run_id: str, body: dict[str, Any]) -> dict[str, Any]:
        calls.append(repr(body).encode())
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return {"status": "ACCEPT", "run": run_id, "input": body}

    scope = {**HTTP, "path": "/api/flow_runs/1/resume", "raw_path": b"/api/flow_runs/1/resume", "query_string": b"",
             "headers": [(b"content-type", b"application/json")], "http_version": "1.1", "scheme": "http",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "root_path": ""}  # fmt: skip
    sent = _call(RetryWhenLocked(app, first_pause_s=0.001), scope, b'{"run_input": {"reviewer": "Ada"}}')
    assert len(calls) == 3
    assert sent[0]["status"] == 200 and b'"reviewer":"Ada"' in sent[1]["body"]


def test_other_answers_and_websockets_pass_through_once() -> None:
    inner = Locked(locked=0, status=422)
    assert _call(RetryWhenLocked(inner, first_pause_s=0.001), HTTP, b"bad")[0]["status"] == 422
    assert inner.bodies == [b"bad"]
    assert _call(RetryWhenLocked(Locked(0)), {"type": "websocket", "path": "/api/events/in"}) == [
        {"type": "websocket.accept"}
    ]


def test_the_servers_background_worker_asks_its_queue_every_two_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    from docket import Docket
    from prefect.server.api import background_workers

    from assay.apps.prefect_serve import calmer_background_worker

    monkeypatch.setattr(background_workers, "Worker", background_workers.Worker)  # restored after the test
    calmer_background_worker()
    worker = background_workers.Worker(Docket(name="calm", url="memory://calm"))
    assert worker.minimum_check_interval.total_seconds() == 2.0
    assert worker.scheduling_resolution.total_seconds() == 2.0
