"""A real Prefect server for tests, as Assay runs it (``assay.apps.prefect_serve``) on a free 127.0.0.1 port."""

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from assay.testing.processes import stop_group

STARTUP_TIMEOUT_S = 90.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_environment(home: Path, api_url: str) -> dict[str, str]:
    """Environment for processes that talk to this server (and keep all their state under ``home``)."""
    return {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": api_url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }


TEMPLATES = Path(__file__).resolve().parents[2] / ".assay" / "cache" / "prefect-db"


def migrated_database() -> Path:
    """An empty Prefect database with every migration applied, made once per Prefect version (under a file
    lock, so parallel test workers wait for the first) and copied into each test server's home: migrating a
    fresh database costs about 10 s of CPU, more than half of a server start."""
    target = TEMPLATES / f"prefect-{version('prefect')}.db"
    if target.is_file():
        return target
    TEMPLATES.mkdir(parents=True, exist_ok=True)
    with open(TEMPLATES / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():
            with tempfile.TemporaryDirectory() as scratch:
                env = {**os.environ, "PREFECT_HOME": scratch, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
                env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
                subprocess.run(
                    [sys.executable, "-m", "prefect", "server", "database", "upgrade", "-y"],
                    env=env, check=True, capture_output=True, timeout=STARTUP_TIMEOUT_S * 2,
                )  # fmt: skip
                os.replace(shutil.copy(Path(scratch) / "prefect.db", target.with_suffix(".part")), target)
    return target


@contextmanager
def running_prefect_server(home: Path) -> Iterator[str]:
    """Yield the API URL (``http://127.0.0.1:PORT/api``) of a fresh server with its own SQLite database (a copy
    of the migrated template, unless ``home`` already holds one)."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "prefect.db").exists():
        shutil.copy(migrated_database(), home / "prefect.db")
    port = _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = server_environment(home, api_url)
    env.pop("PREFECT_API_URL")
    env["PREFECT_SERVER_UI_API_URL"] = api_url  # the UI in a browser calls this port, not the default 4200
    log = open(home / "server.log", "wb")  # noqa: SIM115 - closed in finally
    process = subprocess.Popen(  # the server Assay runs: Prefect's app, locked-database refusals replayed
        [sys.executable, "-m", "assay.apps.prefect_serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{api_url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (home / "server.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"Prefect server did not become healthy on {api_url}; log tail:\n{tail}")
            time.sleep(0.5)
        yield api_url
    finally:
        stop_group(process, signal.SIGTERM, timeout_s=20)
        log.close()


@dataclass(frozen=True)
class PrefectServer:
    """A running test server: its API URL and the folder its database and log live in."""

    api_url: str
    home: Path

    def environment(self, client_home: Path | None = None) -> dict[str, str]:
        """``server_environment`` for a process reporting here (its Prefect state in ``client_home``)."""
        return server_environment(client_home or self.home, self.api_url)

    @contextmanager
    def reporting(self) -> Iterator[str]:
        """This process's flows and Prefect clients report to this server while the block runs."""
        from prefect.settings import PREFECT_API_URL, temporary_settings

        with temporary_settings({PREFECT_API_URL: self.api_url}):
            try:
                yield self.api_url
            finally:
                _drain_prefect_workers()


DRAIN_TIMEOUT_S = 10.0


def _drain_prefect_workers() -> None:
    """Send the logs and events this process still holds to the server now, while it runs (as Prefect's own
    test harness does before it stops its server): otherwise they are sent at exit, to a stopped server, and the
    process retries for about a minute before it ends. Only the services already running are drained (asking
    for an instance starts one), from this thread, which runs no event loop, each wait bounded by
    ``DRAIN_TIMEOUT_S``."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for service in (APILogWorker, EventsWorker):
        service.drain_all(timeout=DRAIN_TIMEOUT_S, at_exit=False)


RUN_TIMEOUT_S = 300


def wait_for_final_state(client: Any, run_id: Any, serve: subprocess.Popen, log_path: Path) -> Any:
    """The final state of a flow run that a ``serve`` process (logging to ``log_path``) runs; fails with the
    log's tail when ``serve`` exits first or the run is not final within ``RUN_TIMEOUT_S``."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        state = client.read_flow_run(run_id).state
        if state is not None and state.is_final():
            return state
        if serve.poll() is not None:
            raise AssertionError(f"serve exited with {serve.returncode} during the run:\n{log_tail(log_path)}")
        time.sleep(1)
    raise AssertionError(f"the run did not finish within {RUN_TIMEOUT_S} s:\n{log_tail(log_path)}")


def wait_for_paused(client: Any, run_id: Any, serve: subprocess.Popen, log_path: Path) -> Any:
    """The run's state once it pauses for a form; fails with the log's tail when it ends or ``serve`` exits first."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        state = client.read_flow_run(run_id).state
        if state is not None and state.is_paused():
            return state
        if state is not None and state.is_final():
            raise AssertionError(f"the run ended {state.type} before its form: {state.message}\n{log_tail(log_path)}")
        if serve.poll() is not None:
            raise AssertionError(f"serve exited with {serve.returncode} during the run:\n{log_tail(log_path)}")
        time.sleep(1)
    raise AssertionError(f"the run did not pause within {RUN_TIMEOUT_S} s:\n{log_tail(log_path)}")


def log_tail(path: Path) -> str:
    return path.read_text(errors="replace")[-4000:]


def run_created_by_form(api_url: str, run_name: str, log_path: Path | None = None) -> str:
    """The id of the flow run a UI Run form created under ``run_name``, once the API lists it (at most 120 s:
    under load the server replays a create that met a locked database, ``assay.apps.prefect_serve``)."""
    deadline = time.monotonic() + 120
    body = json.dumps({"flow_runs": {"name": {"any_": [run_name]}}}).encode()
    while time.monotonic() < deadline:
        request = urllib.request.Request(
            f"{api_url}/flow_runs/filter", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            runs = json.load(response)
        if runs:
            return str(runs[0]["id"])
        time.sleep(1)
    tail = f":\n{log_tail(log_path)}" if log_path else ""
    raise AssertionError(f"submitting the Run form created no flow run named {run_name!r}{tail}")


def api(api_url: str, path: str, body: dict | None = None) -> Any:
    """A JSON call to the server's REST API (POST when ``body`` is given)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{api_url}{path}", data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@dataclass
class ServedDeployment:
    """A real Prefect server and a ``python -m assay.deployments.serve`` process serving one deployment."""

    api_url: str
    process: subprocess.Popen
    log: Path
    out: Path  # the deployment's exports (serve --out ROOT -> ROOT/<deployment name>/<run id>)
    env: dict[str, str]  # the serving process's environment (its ASSAY_HOME holds the artifact store)

    @property
    def ui(self) -> str:
        return self.api_url.removesuffix("/api")

    @property
    def home(self) -> Path:
        return Path(self.env["ASSAY_HOME"])

    def tail(self) -> str:
        return log_tail(self.log)


@contextmanager
def serving_deployment(deployment: str, home: Path, base: Path, cwd: Path) -> Iterator[ServedDeployment]:
    """Serve ``FLOW/NAME`` from prefect.yaml against a fresh server (state under ``home``), offline, exporting
    under ``base/exports`` with ``ASSAY_HOME`` at ``base/home``; yields once the API lists the deployment."""
    with running_prefect_server(home) as api_url:
        env = server_environment(home, api_url) | {
            "ASSAY_HOME": str(base / "home"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TQDM_DISABLE": "1",
            "PREFECT_RUNNER_POLL_FREQUENCY": "2",
        }
        log = base / "serve.log"
        with open(log, "wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "assay.deployments.serve", "--deployment", deployment,
                 "--out", str(base / "exports")],
                env=env, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        served = ServedDeployment(api_url, process, log, base / "exports" / deployment.split("/")[-1], env)
        try:
            _wait_until_listed(served, deployment)
            yield served
        finally:
            stop_group(process)


def _wait_until_listed(served: ServedDeployment, deployment: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert served.process.poll() is None, f"serve exited:\n{served.tail()}"
        try:
            api(served.api_url, f"/deployments/name/{deployment}")
            return
        except urllib.error.HTTPError:
            time.sleep(1)
    raise AssertionError(f"the deployment was not served within 120 s:\n{served.tail()}")
