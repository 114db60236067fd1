"""Fault injection shared by every local protocol server in the tests, so one fault test can drive them all.

A server picks the fault for a request with ``FaultPlan.next(request, prompt)``, first match wins:
- the ``x-fault`` request header,
- a ``[fault:NAME]`` marker in the prompt,
- else the next entry of the plan (a list consumed in order; ``None`` = answer normally).

Generic names, which every server must support: ``429`` (with Retry-After), ``500``, ``503``, ``slow`` (sleeps
``slow_s`` before answering), ``drop`` (closes the connection without a reply), ``garbage`` (a non-JSON body
under a JSON content type) and ``empty`` (a well-formed reply with no answer, in the protocol's own shape).
``generic_fault`` produces the transport-level ones; ``empty`` is each server's to build.
"""

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from fastapi.responses import PlainTextResponse, Response

GENERIC_FAULTS = ("429", "500", "503", "slow", "drop", "garbage", "empty")

ErrorResponse = Callable[[int, str, dict[str, str] | None], Response]
"""Builds the protocol's own error reply: (status, message, extra headers) -> response."""


@dataclass
class FaultPlan:
    plan: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def next(self, request: Request, prompt: str | None = None) -> str | None:
        if request.headers.get("x-fault"):
            return request.headers["x-fault"]
        if isinstance(prompt, str) and "[fault:" in prompt:
            return prompt.split("[fault:", 1)[1].split("]", 1)[0]
        with self._lock:
            return self.plan.pop(0) if self.plan else None


async def generic_fault(
    fault: str | None, request: Request, error: ErrorResponse, *, retry_after_s: float = 0.0, slow_s: float = 5.0
) -> Response | None:
    """The reply for a transport-level fault, or ``None`` when the request goes on (no fault, ``slow`` after
    its sleep, or a fault the server handles itself such as ``empty``)."""
    if fault == "429":
        return error(429, "Rate limit reached.", {"retry-after": str(retry_after_s)})
    if fault in ("500", "503"):
        return error(int(fault), "The server had an error while processing your request.", None)
    if fault == "slow":
        await asyncio.sleep(slow_s)
        return None
    if fault == "garbage":
        return PlainTextResponse("<html>502 Bad Gateway</html>{not json", media_type="application/json")
    if fault == "drop":
        request.scope["test.transport"].abort()  # the client sees the connection closed, no reply
        return Response(status_code=500)  # never reaches the client
    return None


class DroppingApp:
    """ASGI wrapper: gives the app the connection's transport, so a ``drop`` fault can abort it. Serve the
    wrapped app with ``running_app(DroppingApp(app), lifespan="off")``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            # uvicorn's ``send`` is a method of its request cycle, which holds the connection's transport
            scope["test.transport"] = send.__self__.transport
        await self.app(scope, receive, send)
