"""A real Prefect server for tests, as Assay runs it (``assay.apps.prefect_serve``) on a free 127.0.0.1 port."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def running_prefect_server(home: Path) -> Iterator[str]:
    """Yield the API URL (``http://127.0.0.1:PORT/api``) of a fresh server with its own SQLite database."""
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
