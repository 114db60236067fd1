"""The warm worker's side of ``assay.apps.cli.warm``: prepare like a command, import, then fork per command.

``python -m assay.apps.cli.warm_worker KEY`` is started by ``assay.apps.cli.warm.start_worker`` in a new session,
with the environment and working directory of the command that started it; it serves only while that still gives
KEY.
"""

import atexit
import contextlib
import importlib
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

from assay.apps.cli.exit import exit_status
from assay.apps.cli.warm import LENGTH, code_fingerprint, read_exactly, runtime_folder, worker_key

PREFETCH = (
    "prefect",
    "assay.flows.evaluate",
    "assay.flows.terminal",
    "assay.evaluators",
    "assay.artifacts.publish",
    "assay.tasks.report",
    "rouge_score.rouge_scorer",  # imports all of nltk (scipy.stats, scikit-learn): 1.6 s on first ROUGE
    "sacrebleu.metrics",
)
"""What a worker imports before it serves: the ~2 s a small ``assay evaluate`` spends importing, and the
scoring libraries whose import costs more than their scoring (ROUGE at 1,000 cases: 1.6 s import, 0.15 s)."""
IDLE_MINUTES = 20.0
"""A worker ends after this long without a command (or the server's idle time, if shorter)."""
_CHECK_EVERY_S = 5.0


def _run_child(connection: socket.socket, request: dict[str, Any], fds: list[int], defaults: dict[str, str]) -> None:
    """In the forked copy: become the command's process and run it; never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    environment = dict(request["env"])
    for name, value in defaults.items():  # what configuring Prefect set in the worker, as a command would
        environment.setdefault(name, value)
    os.environ.clear()
    os.environ.update(environment)
    sys.argv = list(request["argv"])
    outcome = {"exit": 1}
    reported = threading.Event()

    def report() -> None:  # registered before the command runs: runs after what the command registers
        # (Prefect's log and event flushes), so the exit status is sent once the output is complete
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        reported.set()
        with contextlib.suppress(OSError):
            connection.sendall((json.dumps(outcome) + "\n").encode())

    atexit.register(report)
    connection.sendall((json.dumps({"pid": os.getpid()}) + "\n").encode())
    threading.Thread(target=_end_with_the_caller, args=(connection, reported), daemon=True).start()
    try:
        from assay.apps.cli.main import app

        app(prog_name="assay")
    except SystemExit as done:
        outcome["exit"] = exit_status(done.code)
    except KeyboardInterrupt:
        outcome["exit"] = 130
    raise SystemExit(outcome["exit"])


def _end_with_the_caller(connection: socket.socket, reported: threading.Event) -> None:
    """Kill this copy when its caller is gone before the exit status was sent. The caller passes on the signals
    it can catch, but a SIGKILL (a CI timeout, ``kill -9``, the OOM killer) ends it silently, and the command
    would go on running unseen, racing a rerun over the same run's files. The caller sends nothing after its
    request, so the socket reading end-of-file is that moment; the copy then ends as the ``assay`` process
    itself would have."""
    with contextlib.suppress(OSError):
        while connection.recv(64):
            pass
    if not reported.is_set():
        os.kill(os.getpid(), signal.SIGKILL)


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """The request and the caller's three descriptors, from a process of this user; None (and the connection
    closed) for anything else."""
    fds: list[int] = []
    try:
        connection.settimeout(30)
        uid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if uid == os.getuid():
            header, fds, _, _ = socket.recv_fds(connection, LENGTH.size, 3)
            request = json.loads(read_exactly(connection, LENGTH.unpack(header)[0]))
            if len(fds) == 3 and isinstance(request, dict):
                connection.settimeout(None)
                return request, fds
    except (OSError, ValueError, struct.error) as error:
        print(f"a request failed: {type(error).__name__}: {error}", flush=True)
    _close(connection, fds)
    return None


def _close(connection: socket.socket, fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    connection.close()


def _still_current(key: str, server: Any, published: tuple[Path, int]) -> str | None:
    """Why this worker must stop serving, or None."""
    path, inode = published
    try:
        if os.stat(path).st_ino != inode:
            return "another worker took its place"
    except OSError:
        return "its socket was removed"
    if worker_key(_SPAWN_ENV, os.getcwd(), code_fingerprint()) != key:
        return "the sources or installed packages changed"
    from assay.apps.prefect_server import read_state

    state = read_state(server.home)
    if state is None:
        return "the kept Prefect server stopped"
    if (state.pid, state.port) != (server.state.pid, server.state.port):
        return "the kept Prefect server was restarted"
    return None


_SPAWN_ENV: dict[str, str] = {}


def serve(key: str) -> int:
    """Prepare like a command would (settings, Prefect pointed at the kept server), import, then serve."""
    _SPAWN_ENV.update(os.environ)
    if worker_key(_SPAWN_ENV, os.getcwd(), code_fingerprint()) != key:
        print("the environment or sources changed before the worker started", flush=True)
        return 0
    folder = runtime_folder()
    from assay.apps.prefect_env import configure_prefect
    from assay.apps.prefect_server import KeptServer, configured_api_url, healthy, prefect_home, read_state
    from assay.config import load_settings

    settings = load_settings()
    if settings.prefect_server != "keep":
        print("settings choose a temporary Prefect server: no warm worker", flush=True)
        return 0
    configure_prefect(settings)
    if configured_api_url() is not None:
        print("Prefect is pointed at another server: no warm worker", flush=True)
        return 0
    home = prefect_home().resolve()
    state = read_state(home)
    if state is None or not healthy(state.api_url):  # a worker never starts a server: it serves beside one
        print("no kept Prefect server is running: no warm worker", flush=True)
        return 0
    os.environ["PREFECT_API_URL"] = state.api_url  # as a command that finds the kept server sets it
    server = KeptServer(state, home, started_now=False, timeout_s=0)
    defaults = {name: value for name, value in os.environ.items() if name not in _SPAWN_ENV}
    started = time.perf_counter()
    for module in PREFETCH:
        importlib.import_module(module)
    if threading.active_count() != 1:
        print(f"importing started threads ({threading.enumerate()}): a fork would not be safe", flush=True)
        return 0
    print(f"worker {os.getpid()} ready in {time.perf_counter() - started:.1f} s for {os.getcwd()}", flush=True)
    path, staging = folder / f"{key}.sock", folder / f"{key}.{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(staging))
    except OSError as error:  # e.g. "AF_UNIX path too long": ASSAY_WARM_WORKER_DIR too deep
        print(f"cannot listen on {staging}: {error}; no warm worker", flush=True)
        (folder / f"{key}.pid").unlink(missing_ok=True)
        return 0
    listener.listen(16)
    os.replace(staging, path)  # published only once it accepts
    published = (path, os.stat(path).st_ino)
    listener.settimeout(_CHECK_EVERY_S)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # finished commands are reaped by the kernel
    idle_s = min(settings.prefect_server_idle_minutes, IDLE_MINUTES) * 60
    last_used = time.monotonic()
    reason = None
    while reason is None:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            reason = _still_current(key, server, published)
            if reason is None and time.monotonic() - last_used > idle_s:
                reason = f"idle for {idle_s / 60:.0f} min"
            continue
        received = _receive(connection)
        if received is None:
            continue
        request, fds = received
        if (reason := _still_current(key, server, published)) is not None:
            with contextlib.suppress(OSError):
                connection.sendall((json.dumps({"refused": reason}) + "\n").encode())
            _close(connection, fds)
            break
        last_used = time.monotonic()
        # No try/finally or with-block may enclose the fork: the copy leaves by SystemExit, which would run
        # the worker's clean-up (closing descriptor numbers the command has reused) on its way out.
        child = os.fork()
        if child == 0:
            listener.close()
            _run_child(connection, request, fds, defaults)
        _close(connection, fds)
        print(f"'assay {' '.join(request['argv'][1:2])}' in process {child}", flush=True)
    if _still_current(key, server, published) != "another worker took its place":
        path.unlink(missing_ok=True)
    listener.close()
    (folder / f"{key}.pid").unlink(missing_ok=True)
    print(f"worker {os.getpid()} stopped: {reason}", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m assay.apps.cli.warm_worker KEY (started by the assay command itself)")
    sys.exit(serve(sys.argv[1]))
