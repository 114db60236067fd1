"""The Prefect server as Assay runs it: Prefect's own application (API, UI and services, exactly what
``prefect server start`` serves in the foreground) behind one ASGI middleware, ``RetryWhenLocked``.

Why: Prefect's SQLite database is in WAL mode with a 60 s busy timeout, yet a deferred transaction that reads
and then writes while another connection commits fails at once with "database is locked" (SQLite does not
wait in that case). Prefect answers such a request 503, which its Python client retries but the browser UI
does not: a reviewer's Submit on a review form failed that way while an evaluation wrote to the same server.
The failed transaction was rolled back whole, so the request can be replayed; the middleware replays it up to
ten times, with a growing pause (11 s in all), before giving the 503 to the caller. Nothing else changes:
other statuses, streams and websockets pass through untouched.

Run as ``python -m assay.apps.prefect_serve --host 127.0.0.1 --port 4200`` (the kept server's supervisor and the
tests' servers do)."""

import argparse
import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import timedelta
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

RETRIED_STATUS = 503
ATTEMPTS = 10
FIRST_PAUSE_S = 0.1  # then doubled up to LONGEST_PAUSE_S: 0.1, 0.2, 0.4, 0.8, 1.6, 2, 2, 2, 2 s (11.1 s at most)
LONGEST_PAUSE_S = 2.0
logger = logging.getLogger("assay.apps.prefect_serve")


class RetryWhenLocked:
    """Replays an HTTP request whose response would be 503 (Prefect's answer to a locked SQLite database)
    up to ``attempts`` times; the body is read once and replayed to each attempt."""

    def __init__(self, app: App, *, attempts: int = ATTEMPTS, first_pause_s: float = FIRST_PAUSE_S) -> None:
        self.app = app
        self.attempts = max(1, attempts)
        self.first_pause_s = first_pause_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        pause = self.first_pause_s
        for attempt in range(1, self.attempts + 1):
            held = await self._attempt(scope, body, receive, send, hold_503=attempt < self.attempts)
            if held is None:
                return
            logger.info("%s %s: 503 (database locked) on try %d, replaying", scope["method"], scope["path"], attempt)
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE_S)

    async def _attempt(
        self, scope: Scope, body: bytes, receive: Receive, send: Send, *, hold_503: bool
    ) -> list[Message] | None:
        """One try. A 503 is held back (returned) when another try may follow; anything else is sent on."""
        delivered = False
        held: list[Message] | None = None

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            if held is not None:  # this try's answer is discarded: it has nothing more to wait for
                return {"type": "http.disconnect"}
            return await receive()  # the client's own next message (its disconnect), as without the middleware

        async def forward(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start" and message["status"] == RETRIED_STATUS and hold_503:
                held = [message]
                return
            if held is not None:
                held.append(message)
                return
            await send(message)

        try:
            # a copy per try: Starlette's routing writes into the scope (a mount's root_path, path params),
            # and a second try on the first one's scope matches no route (404)
            await self.app(dict(scope), replay, forward)
        except Exception:
            # Starlette's outermost middleware sends the handler's 503 and then raises the exception again
            # ("we always continue to raise the exception"): with the 503 held back, that is the retryable
            # refusal, so it is swallowed here and the request replayed; anything else goes on to uvicorn.
            if held is None:
                raise
        return held


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


BACKGROUND_CHECK_INTERVAL = timedelta(seconds=2)
"""How often the server's background worker asks its queue for due work (Prefect's docket worker: 250 ms)."""


def calmer_background_worker() -> None:
    """Most of what an idle Prefect server spends is its docket worker asking an in-memory queue four times a
    second (py-spy on an idle server; ``bench/idle_server.py`` measures it: 1.53% of a core with Prefect's defaults,
    0.70% with Assay's settings and this). Every 2 s is soon enough for its work: marking deployments ready,
    pause expirations, cancellation clean-up."""
    from prefect.server.api import background_workers

    worker = background_workers.Worker
    background_workers.Worker = functools.partial(  # type: ignore[misc]
        worker, minimum_check_interval=BACKGROUND_CHECK_INTERVAL, scheduling_resolution=BACKGROUND_CHECK_INTERVAL
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args(argv)

    import uvicorn
    from prefect.server.api.server import create_app
    from prefect.settings import (
        PREFECT_SERVER_API_KEEPALIVE_TIMEOUT,
        PREFECT_SERVER_API_WEBSOCKET_PING_INTERVAL,
        PREFECT_SERVER_API_WEBSOCKET_PING_TIMEOUT,
        PREFECT_SERVER_LOGGING_LEVEL,
    )

    calmer_background_worker()
    uvicorn.run(
        app=RetryWhenLocked(create_app(final=True, webserver_only=False)),
        host=options.host,
        port=options.port,
        timeout_keep_alive=PREFECT_SERVER_API_KEEPALIVE_TIMEOUT.value(),
        ws_ping_interval=PREFECT_SERVER_API_WEBSOCKET_PING_INTERVAL.value(),
        ws_ping_timeout=PREFECT_SERVER_API_WEBSOCKET_PING_TIMEOUT.value(),
        log_level=PREFECT_SERVER_LOGGING_LEVEL.value().lower(),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
