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
itself when the kept server stops, after ``warm_worker.IDLE_MINUTES`` without a command, or when the sources change; a
command that finds ``MAX_WORKERS`` workers (of other environments) running starts none.
``ASSAY_WARM_WORKER=off`` turns it off.

This module (keys, the client, starting a worker) imports only the standard library: it runs before anything
else in every command. The worker itself is ``assay.apps.cli.warm_worker``.
"""

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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

SOURCE_FOLDERS = ("assay", "evaluators", "perturbators", "artifacts", "tasks", "flows", "deployments")
"""The folders of the installed ``assay`` namespace: a change in any of them retires a warm worker."""
VOLATILE = frozenset(
    {"_", "PWD", "OLDPWD", "SHLVL", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TERM_SESSION_ID", "COLUMNS",
     "LINES", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "WINDOWID", "DISPLAY", "TMUX", "TMUX_PANE", "STY",
     "SSH_TTY", "SSH_CLIENT", "SSH_CONNECTION", "WT_SESSION", "VTE_VERSION"}
)  # fmt: skip
"""Variables that say only what terminal a command runs in: passed to the command, not part of the key."""
MAX_WORKERS = 3
"""Workers of other environments or directories at once; a command finding this many starts none."""
LENGTH = struct.Struct("!Q")
ROOT = Path(__file__).resolve().parents[3]


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
    sources = _newest_mtime(ROOT / name for name in SOURCE_FOLDERS)
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
    header = LENGTH.pack(len(data))
    if fds:
        socket.send_fds(connection, [header], fds)
    else:
        connection.sendall(header)
    connection.sendall(data)


def read_exactly(connection: socket.socket, size: int) -> bytes:
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
            [sys.executable, "-m", "assay.apps.cli.warm_worker", key],
            env=dict(environ),
            cwd=os.getcwd(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    pid_file.write_text(str(process.pid))
