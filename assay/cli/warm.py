"""A warm worker that runs ``assay`` commands in a forked copy of a process that has already imported Prefect
and the evaluation code, so a small command does not pay ~2 s of imports every time.

With Assay's kept Prefect server (the default), the first command starts a worker beside it when it ends.
Later commands from the same directory, with the same environment and the same installed code, hand their
arguments, environment, working directory and terminal (standard input, output and error, passed as file
descriptors) to the worker over a Unix socket; the worker forks, the copy runs the command exactly as the
``assay`` process would, and its exit status comes back. Ctrl-C and termination signals are passed on to
the copy. Anything else about the call goes the ordinary way: no worker, a refusal, another environment.

What keys a worker (the socket's name): the user, the Python executable, the working directory, every
environment variable except a few that only describe the terminal session (``VOLATILE``), and the newest
modification time of Assay's sources and of the installed packages' folder. Import-time state therefore never
differs from what a fresh process would have; a changed file or an upgrade starts a new worker. A worker ends
itself when the kept server stops, after ``IDLE_MINUTES`` without a command, or when the sources change; a
command that finds ``MAX_WORKERS`` workers (of other environments) running starts none.
``ASSAY_WARM_WORKER=off`` turns it off.

This module imports only the standard library: the client side runs before anything else in every command.
"""

import atexit
import contextlib
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

PACKAGES = ("assay", "evaluators", "perturbators", "artifacts", "tasks", "flows", "deployments")
VOLATILE = frozenset(
    {"_", "PWD", "OLDPWD", "SHLVL", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TERM_SESSION_ID", "COLUMNS",
     "LINES", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "WINDOWID", "DISPLAY", "TMUX", "TMUX_PANE", "STY",
     "SSH_TTY", "SSH_CLIENT", "SSH_CONNECTION", "WT_SESSION", "VTE_VERSION", "ASSAY_WARM_WORKER_LOG"}
)  # fmt: skip
"""Variables that say only what terminal a command runs in: passed to the command, not part of the key."""
PREFETCH = ("prefect", "flows.evaluate", "flows.terminal", "evaluators", "artifacts.publish", "tasks.report")
"""What a worker imports before it serves: the ~2 s a small ``assay evaluate`` spends importing."""
_CHECK_EVERY_S = 5.0
MAX_WORKERS = 3
"""Workers of other environments or directories at once; a command finding this many starts none."""
IDLE_MINUTES = 20.0
"""A worker ends after this long without a command (or the server's idle time, if shorter)."""
_LENGTH = struct.Struct("!Q")
ROOT = Path(__file__).resolve().parents[2]


def enabled(environ: Mapping[str, str]) -> bool:
    """The worker is used only with Assay's kept Prefect server (the worker checks the settings file too)."""
    return (
        environ.get("ASSAY_WARM_WORKER", "on").strip().lower() not in {"off", "0", "false", "no"}
        and environ.get("ASSAY_PREFECT_SERVER", "keep").strip().lower() == "keep"
        and not environ.get("PREFECT_API_URL")  # the user's own server: no kept one to serve beside
        and hasattr(socket, "AF_UNIX")
        and hasattr(socket, "send_fds")
        and hasattr(os, "fork")
    )


def _newest_mtime(folders: Iterator[Path]) -> int:
    newest = 0
    for folder in folders:
        stack = [folder]
        while stack:
            try:
                entries = list(os.scandir(stack.pop()))
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__" and not entry.name.startswith("."):
                        stack.append(Path(entry.path))
                elif entry.name.endswith((".py", ".toml", ".json", ".yaml")):
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
    return newest


def code_fingerprint() -> str:
    """The newest change to Assay's sources and to the installed packages (pip rewrites that folder)."""
    sources = _newest_mtime(ROOT / name for name in PACKAGES)
    try:
        installed = os.stat(sysconfig.get_paths()["purelib"]).st_mtime_ns
    except OSError:
        installed = 0
    return f"{sources}:{installed}"


def worker_key(environ: Mapping[str, str], cwd: str, fingerprint: str) -> str:
    kept = sorted((name, value) for name, value in environ.items() if name not in VOLATILE)
    material = json.dumps([sys.executable, os.getuid(), cwd, fingerprint, kept])
    return hashlib.sha256(material.encode()).hexdigest()[:20]  # short: a socket's path has ~100 bytes at most


def runtime_folder() -> Path:
    """A folder only this user can enter: sockets, pid files and worker logs (``ASSAY_WARM_WORKER_DIR``)."""
    folder = Path(os.environ.get("ASSAY_WARM_WORKER_DIR") or Path(tempfile.gettempdir()) / f"assay-warm-{os.getuid()}")
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.stat().st_uid != os.getuid() or folder.stat().st_mode & 0o077:
        raise PermissionError(f"{folder} is not private to this user")
    return folder


def socket_path(key: str) -> Path:
    return runtime_folder() / f"{key}.sock"


# -- the client side (every command) ------------------------------------------------------------------------------


class _Refused(Exception):
    """The worker did not take the command (stale, busy shutting down): run it the ordinary way."""


def _send_message(connection: socket.socket, payload: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    header = _LENGTH.pack(len(data))
    if fds:
        socket.send_fds(connection, [header], fds)
    else:
        connection.sendall(header)
    connection.sendall(data)


def _read_exactly(connection: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = connection.recv(left)
        if not chunk:
            raise ConnectionError("connection closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_line(reader: Any) -> dict[str, Any] | None:
    line = reader.readline()
    return json.loads(line) if line else None


def run_in_worker(argv: list[str], environ: Mapping[str, str]) -> int | None:
    """Run the command in a warm worker; its exit status, or None when no worker took it."""
    cwd = os.getcwd()
    try:
        path = socket_path(worker_key(environ, cwd, code_fingerprint()))
    except OSError:
        return None
    if not path.exists():
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
        _send_message(connection, {"argv": argv, "cwd": cwd, "env": dict(environ)}, [0, 1, 2])
        reader = connection.makefile("rb")
        started = _read_line(reader)
        if not started or "pid" not in started:
            raise _Refused(started.get("refused", "") if started else "closed")
    except (OSError, _Refused, ValueError):
        connection.close()
        return None
    child = int(started["pid"])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    while True:
        try:
            ended = _read_line(reader)
            break
        except InterruptedError:
            continue
    connection.close()
    if ended is None or "exit" not in ended:
        sys.stderr.write("error: the command's process in Assay's warm worker ended without an exit status\n")
        return 1
    return int(ended["exit"])


def _live_workers(folder: Path) -> list[Path]:
    live = []
    for pid_file in folder.glob("*.pid"):
        try:
            os.kill(int(pid_file.read_text()), 0)
        except (OSError, ValueError):
            continue
        live.append(pid_file)
    return live


def start_worker(environ: Mapping[str, str]) -> None:
    """Start a worker for this environment and directory in the background, unless one runs or is starting."""
    try:
        key = worker_key(environ, os.getcwd(), code_fingerprint())
        folder = runtime_folder()
    except OSError:
        return
    if len(os.fsencode(folder / f"{key}.{2**22}")) > 100:  # Linux allows 107 bytes: no socket could be made
        return
    pid_file = folder / f"{key}.pid"
    if pid_file in _live_workers(folder) or len(_live_workers(folder)) >= MAX_WORKERS:
        return  # this one runs or is starting, or enough others already hold memory (~150 MB each)
    log = open(folder / f"{key}.log", "ab")  # noqa: SIM115 - handed to the child
    with log:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay.cli.warm", key],
            env=dict(environ),
            cwd=os.getcwd(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    pid_file.write_text(str(process.pid))


# -- the worker side ------------------------------------------------------------------------------------------------


def _code(exit_value: object) -> int:
    if exit_value is None:
        return 0
    if isinstance(exit_value, int):
        return exit_value
    sys.stderr.write(f"{exit_value}\n")
    return 1


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

    def report() -> None:  # registered first, so it runs last: after Prefect has flushed its logs
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        with contextlib.suppress(OSError):
            connection.sendall((json.dumps(outcome) + "\n").encode())

    atexit.register(report)
    connection.sendall((json.dumps({"pid": os.getpid()}) + "\n").encode())
    try:
        from assay.cli.main import app

        app(prog_name="assay")
    except SystemExit as done:
        outcome["exit"] = _code(done.code)
    except KeyboardInterrupt:
        outcome["exit"] = 130
    raise SystemExit(outcome["exit"])


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """The request and the caller's three descriptors, from a process of this user; None (and the connection
    closed) for anything else."""
    fds: list[int] = []
    try:
        connection.settimeout(30)
        uid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if uid == os.getuid():
            header, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, 3)
            request = json.loads(_read_exactly(connection, _LENGTH.unpack(header)[0]))
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
    from assay.prefect_server import read_state

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
    from assay.config import load_settings
    from assay.prefect_env import configure_prefect
    from assay.prefect_server import KeptServer, configured_api_url, healthy, prefect_home, read_state

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
    import importlib
    import threading

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
    sys.exit(serve(sys.argv[1]))
