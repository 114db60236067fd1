"""Assay's side of the h2oGPTe client bridge: find the interpreter that has ``h2ogpte``, run
``h2ogpte_bridge.py`` there once per Assay process, and send it requests from any thread.

The client cannot share Assay's environment (it pins ``websockets==11.0.3``; Prefect needs 15 or newer), so
``make install`` puts it in ``.venv-h2ogpte`` beside ``.venv``, and ``pip check`` passes in both. The bridge is
started on the first h2oGPTe call (importing the client takes about 11 s, as it did in process) and kept for
the life of this process, answering every host's calls concurrently; if it dies, its pending calls fail with
its last words and the next call starts a new one.
"""

import atexit
import contextlib
import importlib.util
import itertools
import json
import subprocess
import sys
import threading
from collections import deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from assay.calls.errors import HostError

BRIDGE = Path(__file__).with_name("h2ogpte_bridge.py")
SETTING = "hosts.h2ogpte_python (ASSAY_HOSTS__H2OGPTE_PYTHON)"
SIBLING_VENV = ".venv-h2ogpte"
START_TIMEOUT_S = 300.0
"""How long the client's import may take (about 11 s on an idle machine, minutes on a loaded one)."""
INSTALL_HINT = (
    "the h2ogpte client needs an environment of its own (h2ogpte 1.7.5 pins websockets==11.0.3, which Prefect "
    "cannot share): `make install` builds .venv-h2ogpte, or `python3.11 -m venv DIR && DIR/bin/pip install "
    f"h2ogpte==1.7.5`, then set {SETTING} to DIR/bin/python"
)


class BridgeFailure(Exception):
    """A call the client failed, as the bridge classified it (``reply``: message, status or kind, created)."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(str(reply.get("message", "")))
        self.reply = reply


def h2ogpte_python() -> str:
    """The interpreter that runs the client: the setting, else ``.venv-h2ogpte`` beside this environment, else
    this interpreter when it has ``h2ogpte`` itself (installed with ``--no-deps``)."""
    from assay.config import load_settings

    named = load_settings().hosts.h2ogpte_python.strip()
    if named:
        if not Path(named).is_file():
            raise HostError(f"{SETTING} = {named!r}: no such interpreter; {INSTALL_HINT}", "configuration")
        return named
    sibling = Path(sys.prefix).parent / SIBLING_VENV / "bin" / "python"
    if sibling.is_file():
        return str(sibling)
    if importlib.util.find_spec("h2ogpte") is not None:
        return sys.executable
    raise HostError(f"the h2ogpte package was not found; {INSTALL_HINT}", "configuration")


class Bridge:
    """One running ``h2ogpte_bridge.py``: requests by id, replies matched by a reader thread."""

    def __init__(self, python: str) -> None:
        self.python = python
        self._process = subprocess.Popen(
            [python, "-I", str(BRIDGE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[Any]] = {}
        self._lock = threading.Lock()
        self._ready: Future[None] = Future()
        self._stderr: deque[str] = deque(maxlen=20)
        threading.Thread(target=self._read, name="assay-h2ogpte-bridge", daemon=True).start()
        threading.Thread(target=self._drain, name="assay-h2ogpte-bridge-stderr", daemon=True).start()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait for the client to be imported (a host's ``prepare`` does, so no case's time-out pays for it)."""
        try:
            self._ready.result(timeout_s)
        except TimeoutError:
            raise HostError(f"the h2ogpte client process ({self.python}) did not start within {timeout_s:g} s",
                            "configuration") from None  # fmt: skip

    def call(self, op: str, url: str, api_key: str, **args: Any) -> Any:
        """Send one request and wait for its reply (the host's thread waits; the bridge runs many at once)."""
        self.wait_ready()
        future: Future[Any] = Future()
        with self._lock:
            if not self.alive:
                raise self._died()
            request_id = next(self._ids)
            self._pending[request_id] = future
            line = json.dumps({"id": request_id, "op": op, "url": url, "api_key": api_key, "args": args})
            try:
                assert self._process.stdin is not None
                self._process.stdin.write(line + "\n")
                self._process.stdin.flush()
            except OSError:
                self._pending.pop(request_id, None)
                raise self._died() from None
        return future.result()

    def close(self) -> None:
        if self._process.stdin is not None and not self._process.stdin.closed:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self._stderr.append(line.rstrip())
                continue
            if message.get("ready"):
                self._ready.set_result(None)
                continue
            with self._lock:
                future = self._pending.pop(message.get("id"), None)
            if future is None:
                continue
            if "error" in message:
                future.set_exception(BridgeFailure(message["error"]))
            else:
                future.set_result(message.get("ok"))
        self._process.wait()
        failure = self._died()
        with self._lock:
            pending, self._pending = self._pending, {}
        if not self._ready.done():
            self._ready.set_exception(failure)
        for future in pending.values():
            future.set_exception(failure)

    def _drain(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(line.rstrip())

    def _died(self) -> HostError:
        last = " | ".join(line for line in self._stderr if line.strip())[-600:]
        return HostError(
            f"the h2ogpte client process ({self.python}) exited with status {self._process.poll()}"
            + (f": {last}" if last else ""),
            "configuration" if not self._ready.done() else "other",
        )


_bridges: dict[str, Bridge] = {}
_bridges_lock = threading.Lock()


def bridge() -> Bridge:
    """The running bridge for the configured interpreter, started on first use and after it died."""
    python = h2ogpte_python()
    with _bridges_lock:
        running = _bridges.get(python)
        if running is None or not running.alive:
            running = _bridges[python] = Bridge(python)
        return running


@atexit.register
def _close_bridges() -> None:
    with _bridges_lock:
        for running in _bridges.values():
            running.close()
        _bridges.clear()
