"""The kept local Prefect server (issue 12): the first command starts it, later commands reuse it instead of
paying a temporary server each, ``assay server stop`` ends it, and it stops by itself when idle."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from assay.apps import prefect_server
from assay.apps.prefect_server import KeptServer, ServerState, ensure_server, read_state, status, stop_server

ASSAY = str(Path(sys.executable).parent / "assay")
LAB = {
    "name": "one",
    "models": [{"key": "m", "type": "imported"}],
    "rows": [
        {
            "test_case": {"key": "c1", "prompt": "What rate?", "expected_output": "3.25% AER"},
            "model_key": "m",
            "actual_output": "It pays 3.25% AER.",
        }
    ],
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(home: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_API")}
    environment.update(
        ASSAY_HOME=str(home),
        PREFECT_HOME=str(home / "prefect"),
        ASSAY_PREFECT_SERVER="keep",
        ASSAY_WARM_WORKER="off",  # these tests are about the server; tests/test_warm_worker.py about the worker
        ASSAY_PREFECT_SERVER_PORT=str(_free_port()),
    )
    return environment


def _assay(environment: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ASSAY, *args], env=environment, cwd=cwd, capture_output=True, text=True, timeout=400, check=False
    )


def _count_flow_runs(api_url: str) -> int:
    request = urllib.request.Request(
        f"{api_url}/flow_runs/count", data=b"{}", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(json.loads(response.read()))


def test_commands_share_one_kept_server_and_assay_server_stop_ends_it(tmp_path: Path) -> None:
    environment = _environment(tmp_path / "home")
    (tmp_path / "lab.json").write_text(json.dumps(LAB))
    home = Path(environment["PREFECT_HOME"])
    try:
        first = _assay(environment, "evaluate", "--lab", "lab.json", "--evaluators", "text_matching",
                       "--out", "first", cwd=tmp_path)  # fmt: skip
        assert first.returncode == 0, first.stderr
        assert "started a local Prefect server for Assay" in first.stderr
        state = read_state(home)
        assert state is not None and str(state.port) == environment["ASSAY_PREFECT_SERVER_PORT"]
        second = _assay(environment, "evaluate", "--lab", "lab.json", "--evaluators", "text_matching",
                        "--out", "second", cwd=tmp_path)  # fmt: skip
        assert second.returncode == 0, second.stderr
        assert "started a local Prefect server" not in second.stderr
        assert read_state(home) == state  # the same server, not a second one
        assert _count_flow_runs(state.api_url) == 2  # both runs are in the kept server's history
        shown = _assay(environment, "server", "status", "--json", cwd=tmp_path)
        info = json.loads(shown.stdout)
        assert info["running"] and info["healthy"] and info["ui_url"] == state.ui_url
        stopped = _assay(environment, "server", "stop", cwd=tmp_path)
        assert stopped.returncode == 0 and f"stopped the server at {state.ui_url}" in stopped.stdout
        assert not status(home)["running"]
        assert read_state(home) is None
    finally:
        stop_server(home)


def test_an_idle_kept_server_stops_itself_and_the_next_command_starts_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "prefect"
    # recorded even when unset, so the URL ensure_server puts in os.environ is taken out again after the test
    monkeypatch.setenv("PREFECT_API_URL", "")
    monkeypatch.delenv("PREFECT_API_URL")
    try:
        server = ensure_server(port=_free_port(), idle_minutes=0.05, timeout_s=240, home=home)
        assert server.started_now
        server.wait()
        again = ensure_server(port=_free_port(), idle_minutes=0.05, timeout_s=240, home=home)
        assert not again.started_now and again.state == server.state
        deadline = time.monotonic() + 120
        while status(home)["running"] and time.monotonic() < deadline:
            time.sleep(1)
        assert not status(home)["running"], (home / "assay-server.log").read_text()[-2000:]
        assert "idle for 0.05 min; stopping it" in (home / "assay-server.log").read_text()
        fresh = ensure_server(port=_free_port(), idle_minutes=5, timeout_s=240, home=home)
        assert fresh.started_now and fresh.state.pid != server.state.pid
    finally:
        stop_server(home)


def test_a_server_slower_than_the_start_timeout_is_one_line_naming_its_log(tmp_path: Path) -> None:
    """No server answers within a second: the command waits that long, then says so in one line that names
    the server's log (the server is left starting for the next command), and runs nothing."""
    environment = _environment(tmp_path / "home") | {"ASSAY_PREFECT_SERVER_START_TIMEOUT_S": "1"}
    (tmp_path / "lab.json").write_text(json.dumps(LAB))
    home = Path(environment["PREFECT_HOME"])
    try:
        done = _assay(environment, "evaluate", "--lab", "lab.json", "--evaluators", "text_matching",
                      "--out", "out", cwd=tmp_path)  # fmt: skip
    finally:
        stop_server(home)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "did not answer within 1 s" in done.stderr and "assay-server.log" in done.stderr
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_command_does_its_first_work_while_a_new_server_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    state = ServerState(pid=os.getpid(), port=_free_port(), started_at=time.time(), log="assay-server.log")
    server = KeptServer(state, Path("."), started_now=True, timeout_s=30)
    answers = iter([False, False, True])  # still creating its database twice, then up
    monkeypatch.setattr(prefect_server, "healthy", lambda url, timeout_s=2.0: next(answers))
    monkeypatch.setattr(prefect_server, "mark_used", lambda home=None: None)
    done: list[str] = []
    server.wait(meanwhile=lambda: done.append("model loaded"))
    assert done == ["model loaded"]

    monkeypatch.setattr(prefect_server, "healthy", lambda url, timeout_s=2.0: True)
    server.wait(meanwhile=lambda: done.append("again"))  # a server already up: nothing is done ahead
    assert done == ["model loaded"]


def test_commands_from_any_folder_share_the_users_one_kept_server_with_quiet_services(tmp_path: Path) -> None:
    environment = _environment(tmp_path / "unused")
    for key in ("ASSAY_HOME", "PREFECT_HOME"):
        environment.pop(key)
    environment["HOME"] = str(tmp_path / "user")
    environment["PREFECT_SERVER_SERVICES_FOREMAN_LOOP_SECONDS"] = "45"  # a user's own choice wins
    home = tmp_path / "user" / ".assay" / "prefect"
    folders = [tmp_path / "project-a", tmp_path / "project-b"]
    for folder in folders:
        folder.mkdir()
    try:
        first = _assay(environment, "server", "start", cwd=folders[0])
        assert first.returncode == 0 and "Prefect server started" in first.stdout, first.stderr
        second = _assay(environment, "server", "start", cwd=folders[1])
        assert second.returncode == 0 and "Prefect server already running" in second.stdout, second.stderr
        state = read_state(home)
        assert state is not None
        assert not (folders[0] / ".assay").exists() and not (folders[1] / ".assay").exists()
        server = (Path("/proc") / str(state.pid) / "environ").read_bytes().split(b"\0")
        assert b"PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED=false" in server
        assert b"PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED=false" in server
        assert b"PREFECT_SERVER_SERVICES_PAUSE_EXPIRATIONS_LOOP_SECONDS=60" in server
        assert b"PREFECT_SERVER_SERVICES_FOREMAN_LOOP_SECONDS=45" in server
    finally:
        stop_server(home)
