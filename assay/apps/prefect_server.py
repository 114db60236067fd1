"""The local Prefect server Assay keeps running between commands.

Without ``PREFECT_API_URL`` every flow used to start Prefect's temporary server, which costs 10-30 s per
command on a small machine and forgets the run history, the pause forms and the artifacts the moment the
command ends. Here the first command starts the Prefect server (``assay.apps.prefect_serve``) on 127.0.0.1 under a
small supervisor process, detached from the command, and every later command (and ``assay.deployments.serve``)
finds it through a state file in ``PREFECT_HOME`` and reuses it. The supervisor stops the server when nothing
has used it for ``prefect_server_idle_minutes``: no command, no running, pending or paused flow run, no served
deployment.

The server starts while the command imports its flows (those imports cost seconds of their own), and the
command waits for it only when it needs it. A slow start is waited out with a progress line up to
``prefect_server_start_timeout_s``; a server that dies or never answers is a one-line error naming its log,
never a traceback. Nothing here imports Prefect: the supervisor must stay small and the command fast.

    python -m assay.apps.prefect_server supervise --port 4200 --idle-minutes 60   (started by ``ensure_server``)
"""

import argparse
import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

STATE_FILE = "assay-server.json"
LOCK_FILE = "assay-server.lock"
USED_FILE = "assay-server.used"

IDLE_SERVICE_SETTINGS: dict[str, str] = {
    # Assay uses no automations: the triggers service (and the actions it would run) only costs wake-ups.
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    # Late-run marking is cosmetic for Assay's runs (they are started by a served deployment or a command).
    "PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED": "false",
    # The services Assay relies on wake once a minute instead of every 5-20 s: a pause's time-out is hours,
    # a served deployment is marked not ready a minute later, a scheduled run still starts on its minute.
    "PREFECT_SERVER_SERVICES_PAUSE_EXPIRATIONS_LOOP_SECONDS": "60",
    # Its subflow monitor reads every running subflow each turn (about 0.3 s of CPU here): every 5 minutes.
    "PREFECT_SERVER_SERVICES_CANCELLATION_CLEANUP_LOOP_SECONDS": "300",
    "PREFECT_SERVER_SERVICES_FOREMAN_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_REPOSSESSOR_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_CLEANUP_RECONCILER_LOOP_SECONDS": "60",
    "PREFECT_SERVER_SERVICES_SCHEDULER_RECENT_DEPLOYMENTS_LOOP_SECONDS": "30",
}
"""Prefect server services tuned for a server that mostly waits: measured by ``bench/idle_server.py``. A user's
own ``PREFECT_SERVER_SERVICES_*`` variables win."""
LOG_FILE = "assay-server.log"
CHECK_EVERY_S = 30.0
ACTIVE_RUN_STATES = ["PENDING", "RUNNING", "PAUSED", "CANCELLING"]


class PrefectServerError(OSError):
    """The kept server could not be started or did not answer; the message names its log. An ``OSError``, so
    the CLI reports it as one line like any other environment failure."""


@dataclass(frozen=True)
class ServerState:
    """What the supervisor writes when it starts: enough for another command to find and check the server."""

    pid: int
    port: int
    started_at: float
    log: str

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def prefect_home() -> Path:
    """The ``PREFECT_HOME`` that ``assay.apps.prefect_env.configure_prefect`` has set (state lives there)."""
    return Path(os.environ.get("PREFECT_HOME", str(Path.home() / ".prefect")))


def read_state(home: Path) -> ServerState | None:
    try:
        data = json.loads((home / STATE_FILE).read_text())
        return ServerState(int(data["pid"]), int(data["port"]), float(data["started_at"]), str(data["log"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_state(home: Path, state: ServerState) -> None:
    partial = home / f"{STATE_FILE}.partial"
    partial.write_text(json.dumps(state.__dict__))
    partial.replace(home / STATE_FILE)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def healthy(api_url: str, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout_s) as response:
            return response.status == 200
    except (OSError, ValueError):
        return False


def mark_used(home: Path | None = None) -> None:
    """Tell the supervisor a command is using the server now (it counts idle time from the last mark)."""
    path = (home or prefect_home()) / USED_FILE
    with contextlib.suppress(OSError):
        path.touch()


def configured_api_url() -> str | None:
    """``PREFECT_API_URL`` from the environment, the active Prefect profile or, when Prefect is already
    imported, its settings in force (a test harness or ``temporary_settings``), if one is set."""
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    if "prefect.settings" in sys.modules:
        from prefect.settings import get_current_settings

        url = get_current_settings().api.url
        return str(url) if url else None
    import tomllib

    try:
        profiles = tomllib.loads((prefect_home() / "profiles.toml").read_text())
    except (OSError, ValueError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or profiles.get("active")
    profile = profiles.get("profiles", {}).get(active or "", {})
    url = profile.get("PREFECT_API_URL") if isinstance(profile, dict) else None
    return str(url) if url else None


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class KeptServer:
    """A handle on the kept server: ``wait`` blocks until it answers (it may still be starting)."""

    state: ServerState
    home: Path
    started_now: bool
    timeout_s: float

    @property
    def api_url(self) -> str:
        return self.state.api_url

    def wait(self, progress: Callable[[str], None] | None = None, meanwhile: Callable[[], None] | None = None) -> None:
        """Block until the server answers; ``meanwhile`` runs once first if it does not answer yet (work the
        command needs anyway, done while a new server creates its database), and counts toward the time-out."""
        deadline = time.monotonic() + self.timeout_s
        announced = False
        started = time.monotonic()
        if meanwhile is not None and not healthy(self.api_url):
            meanwhile()
        while not healthy(self.api_url):
            if not _alive(self.state.pid):
                raise PrefectServerError(
                    f"the local Prefect server stopped while starting; see its log {self.state.log}"
                    f"{_log_tail(Path(self.state.log))}"
                )
            if time.monotonic() > deadline:
                raise PrefectServerError(
                    f"the local Prefect server ({self.state.ui_url}) did not answer within {self.timeout_s:.0f} s "
                    f"(ASSAY_PREFECT_SERVER_START_TIMEOUT_S); it is left running, see its log {self.state.log}"
                )
            if progress is not None and not announced and time.monotonic() - started > 3:
                progress(f"waiting for the local Prefect server at {self.state.ui_url} to start (log {self.state.log})")
                announced = True
            time.sleep(0.25)
        mark_used(self.home)


def _log_tail(log: Path, lines: int = 3) -> str:
    try:
        tail = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()][-lines:]
    except OSError:
        return ""
    return (": " + " | ".join(tail)) if tail else ""


def ensure_server(
    *, port: int = 4200, idle_minutes: float = 60.0, timeout_s: float = 300.0, home: Path | None = None
) -> KeptServer:
    """Find the kept server of this ``PREFECT_HOME`` or start one (without waiting for it), and point this
    process's Prefect client at it through ``PREFECT_API_URL``. Two commands starting at once share one."""
    home = (home or prefect_home()).resolve()
    home.mkdir(parents=True, exist_ok=True)
    with FileLock(str(home / LOCK_FILE), timeout=60):
        state = read_state(home)
        started_now = False
        if state is None or not _alive(state.pid):
            state = _start_supervisor(home, port, idle_minutes)
            started_now = True
        mark_used(home)
    atexit.register(mark_used, home)  # idle time counts from the end of the last command
    os.environ["PREFECT_API_URL"] = state.api_url
    return KeptServer(state, home, started_now, timeout_s)


def _start_supervisor(home: Path, port: int, idle_minutes: float) -> ServerState:
    chosen = port if _port_free(port) else _free_port()
    log = home / LOG_FILE
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay.apps.prefect_server", "supervise", "--port", str(chosen),
             "--idle-minutes", str(idle_minutes), "--home", str(home)],
            stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True, env=_server_environment(home, chosen),
        )  # fmt: skip
    state = ServerState(process.pid, chosen, time.time(), str(log))
    _write_state(home, state)
    return state


def _server_environment(home: Path, port: int) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    environment.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_UI_API_URL=f"http://127.0.0.1:{port}/api",
    )
    for key, value in IDLE_SERVICE_SETTINGS.items():
        environment.setdefault(key, value)
    return environment


def stop_server(home: Path | None = None, timeout_s: float = 30.0) -> ServerState | None:
    """Stop the kept server of this home (the supervisor stops the server); None when none was running."""
    home = (home or prefect_home()).resolve()
    with FileLock(str(home / LOCK_FILE), timeout=60):
        state = read_state(home)
        if state is None or not _alive(state.pid):
            (home / STATE_FILE).unlink(missing_ok=True)
            return None
        os.kill(state.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _alive(state.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(state.pid):
            os.killpg(state.pid, signal.SIGKILL)
        (home / STATE_FILE).unlink(missing_ok=True)
        return state


def status(home: Path | None = None) -> dict[str, Any]:
    """Whether the kept server of this home runs and answers, where, and how long it has been idle."""
    home = (home or prefect_home()).resolve()
    state = read_state(home)
    if state is None or not _alive(state.pid):
        return {"running": False, "prefect_home": str(home)}
    used = home / USED_FILE
    idle_s = time.time() - used.stat().st_mtime if used.exists() else None
    return {
        "running": True,
        "healthy": healthy(state.api_url),
        "ui_url": state.ui_url,
        "api_url": state.api_url,
        "pid": state.pid,
        "uptime_s": round(time.time() - state.started_at, 1),
        "idle_s": None if idle_s is None else round(idle_s, 1),
        "log": state.log,
        "prefect_home": str(home),
    }


# The supervisor: a small process that owns the server and stops it when idle.


def _post(api_url: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{api_url}/{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def busy(api_url: str) -> bool:
    """A flow run is pending, running or paused, or a served deployment is polling (Prefect marks it READY):
    the server is in use. When the API cannot be asked, count it as busy (never stop a working server)."""
    try:
        runs = int(_post(api_url, "flow_runs/count", {"flow_runs": {"state": {"type": {"any_": ACTIVE_RUN_STATES}}}}))
        deployments = _post(api_url, "deployments/filter", {"limit": 200})
    except (OSError, ValueError, TypeError):
        return True
    return runs > 0 or any(deployment.get("status") == "READY" for deployment in deployments)


def _idle_for(home: Path) -> float:
    used = home / USED_FILE
    return time.time() - (used.stat().st_mtime if used.exists() else 0.0)


def _retire(home: Path, idle_s: float) -> bool:
    """Under the commands' lock, check once more that no command has just come, and withdraw the state file
    so that the next command starts a new server instead of finding this one stopping."""
    with FileLock(str(home / LOCK_FILE), timeout=60):
        if _idle_for(home) <= idle_s:
            return False
        state = read_state(home)
        if state is not None and state.pid == os.getpid():
            (home / STATE_FILE).unlink(missing_ok=True)
        return True


def supervise(port: int, idle_minutes: float, home: Path) -> int:
    """Run the Prefect server (``assay.apps.prefect_serve``: Prefect's app, a request refused on a locked database
    replayed) and stop it after ``idle_minutes`` unused, or on SIGTERM/SIGINT."""
    command = [sys.executable, "-m", "assay.apps.prefect_serve", "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    api_url = f"http://127.0.0.1:{port}/api"
    idle_s = idle_minutes * 60
    check_every = min(CHECK_EVERY_S, max(idle_s / 4, 0.5))
    next_check = time.monotonic() + check_every
    while not stopping and server.poll() is None:
        time.sleep(0.25)  # short naps: a stop request is answered at once
        if time.monotonic() < next_check:
            continue
        next_check = time.monotonic() + check_every
        if _idle_for(home) > idle_s and healthy(api_url) and not busy(api_url) and _retire(home, idle_s):
            print(f"assay: the Prefect server was idle for {idle_minutes:g} min; stopping it", flush=True)
            break
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    state = read_state(home)
    if state is not None and state.pid == os.getpid():
        (home / STATE_FILE).unlink(missing_ok=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("supervise", help="run the server and stop it when idle")
    run.add_argument("--port", type=int, required=True)
    run.add_argument("--idle-minutes", type=float, required=True)
    run.add_argument("--home", type=Path, required=True)
    args = parser.parse_args(argv)
    return supervise(args.port, args.idle_minutes, args.home)


if __name__ == "__main__":
    sys.exit(main())
