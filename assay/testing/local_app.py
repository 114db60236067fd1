"""Run an ASGI app with uvicorn on a free 127.0.0.1 port in a background thread: the one way tests serve a
protocol server (the OpenAI fake, http-rag fakes, serve-sample); and, for deliberately broken servers, a plain
``http.server`` handler the same way."""

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_app(app: Any, **config: Any) -> Iterator[str]:
    """``app`` served until the block ends; yields its base URL (``http://127.0.0.1:PORT``). ``config`` goes to
    ``uvicorn.Config`` (e.g. ``lifespan="off"``)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the local test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serving_handler(handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> Iterator[str]:
    """A plain ``http.server`` handler served on a free port of ``host`` (one thread per request) until the
    block ends; yields its base URL. For servers that misbehave below what an ASGI app can express: a reply
    trickled byte by byte, a huge body, a redirect to a recorder."""
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
