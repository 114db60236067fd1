"""The Prefect server's retry of requests refused on a locked database (``assay.prefect_serve``), with a
stand-in ASGI app: a 503 is replayed with the same body until it succeeds or the tries run out; other
answers, and websockets, pass through once."""

import asyncio
from typing import Any

from assay.prefect_serve import RetryWhenLocked


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


def _call(app: Any, scope: dict[str, Any], body: bytes = b"") -> list[dict[str, Any]]:
    chunks = [body[:3], body[3:]]

    async def receive() -> dict[str, Any]:
        if chunks:
            part = chunks.pop(0)
            return {"type": "http.request", "body": part, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    sent: list[dict[str, Any]] = []

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
    sent = _call(RetryWhenLocked(inner, attempts=3, first_pause_s=0.001), HTTP, b"x")
    assert len(inner.bodies) == 3
    assert [message.get("status") for message in sent] == [503, None] and sent[1]["body"] == b"locked"


def test_other_answers_and_websockets_pass_through_once() -> None:
    inner = Locked(locked=0, status=422)
    assert _call(RetryWhenLocked(inner, first_pause_s=0.001), HTTP, b"bad")[0]["status"] == 422
    assert inner.bodies == [b"bad"]
    assert _call(RetryWhenLocked(Locked(0)), {"type": "websocket", "path": "/api/events/in"}) == [
        {"type": "websocket.accept"}
    ]
