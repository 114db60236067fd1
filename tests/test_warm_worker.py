"""The warm worker (issue 12): after a first command with the kept Prefect server, later commands from the same
directory and environment run in a forked copy of a worker that has already imported Prefect and the evaluation
code; they print, write and exit exactly as before, Ctrl-C reaches them, another environment or changed
sources never reach a stale worker, and stopping the server ends the worker."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from assay.apps.cli import warm
from assay.apps.prefect_server import stop_server

pytestmark = pytest.mark.timeout(600)
ASSAY = str(Path(sys.executable).parent / "assay")
ROW = {"model_key": "m", "actual_output": "It pays 3.25% AER."}
LAB = {
    "name": "one",
    "models": [{"key": "m", "type": "imported"}],
    "rows": [{"test_case": {"key": "c1", "prompt": "What rate?", "expected_output": "3.25% AER"}, **ROW}],
}


def test_the_key_ignores_the_terminal_but_not_settings_directory_or_code() -> None:
    base = {"PATH": "/usr/bin", "ASSAY_HOME": "/data/assay", "TERM": "xterm", "COLUMNS": "80"}
    key = warm.worker_key(base, "/work", "1:2")
    assert warm.worker_key({**base, "TERM": "screen", "COLUMNS": "200", "OLDPWD": "/tmp"}, "/work", "1:2") == key
    assert warm.worker_key({**base, "ASSAY_HOME": "/other"}, "/work", "1:2") != key
    assert warm.worker_key({**base, "OPENAI_API_KEY": "sk-x"}, "/work", "1:2") != key  # read at import or not
    assert warm.worker_key(base, "/elsewhere", "1:2") != key
    assert warm.worker_key(base, "/work", "1:3") != key


def test_the_worker_is_used_only_with_the_kept_server_and_can_be_turned_off() -> None:
    assert warm.enabled({}) is True
    assert warm.enabled({"ASSAY_WARM_WORKER": "off"}) is False
    assert warm.enabled({"ASSAY_PREFECT_SERVER": "temporary"}) is False
    assert warm.enabled({"PREFECT_API_URL": "http://prefect.internal/api"}) is False


def test_an_edited_source_file_changes_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "assay").mkdir()
    module = tmp_path / "assay" / "module.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(warm, "ROOT", tmp_path)
    before = warm.code_fingerprint()
    os.utime(module, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert warm.code_fingerprint() != before


def test_a_command_starts_no_worker_when_enough_others_run(monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = Path(tempfile.mkdtemp(prefix="aw-", dir="/tmp"))  # short enough for a socket's path
    monkeypatch.setenv("ASSAY_WARM_WORKER_DIR", str(tmp_path))
    for name in ("a", "b", "c"):  # three live workers of other environments (this process stands in for them)
        (tmp_path / f"{name}.pid").write_text(str(os.getpid()))
    (tmp_path / "gone.pid").write_text("999999999")  # a worker that ended does not count
    assert len(warm._live_workers(tmp_path)) == warm.MAX_WORKERS
    started: list[object] = []
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *args, **kwargs: started.append(args))
    warm.start_worker(dict(os.environ))
    assert started == []
    (tmp_path / "c.pid").unlink()
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *args, **kwargs: started.append(args) or _Process())
    warm.start_worker(dict(os.environ))
    assert len(started) == 1
    shutil.rmtree(tmp_path)


def test_no_worker_is_started_where_its_socket_path_would_be_too_long(monkeypatch: pytest.MonkeyPatch) -> None:
    deep = Path(tempfile.mkdtemp(prefix="aw-", dir="/tmp")) / ("d" * 90)
    deep.mkdir(mode=0o700)
    monkeypatch.setenv("ASSAY_WARM_WORKER_DIR", str(deep))
    started: list[object] = []
    monkeypatch.setattr(warm.subprocess, "Popen", lambda *args, **kwargs: started.append(args) or _Process())
    warm.start_worker(dict(os.environ))
    assert started == []
    shutil.rmtree(deep.parent)


class _Process:
    pid = 424242


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _assay(environment: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ASSAY, *args], env=environment, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def _wait_for(condition, what: str, timeout_s: float = 120, log: Path | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.25)
    raise AssertionError(f"{what} within {timeout_s:.0f} s" + (f"; worker log: {_worker_log(log)!r}" if log else ""))


def _answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _worker_log(folder: Path) -> str:
    return "".join(path.read_text(errors="replace") for path in sorted(folder.glob("*.log")))


def test_later_commands_run_in_the_warm_worker_as_they_would_alone(tmp_path: Path) -> None:
    workers = Path(tempfile.mkdtemp(prefix="aw-", dir="/tmp"))  # a socket's path is limited to ~100 bytes
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_API")}
    environment.update(
        ASSAY_HOME=str(tmp_path / "home"),
        PREFECT_HOME=str(tmp_path / "home" / "prefect"),
        ASSAY_PREFECT_SERVER="keep",
        ASSAY_PREFECT_SERVER_PORT=str(_free_port()),
        ASSAY_WARM_WORKER_DIR=str(workers),
    )
    (tmp_path / "lab.json").write_text(json.dumps(LAB))
    evaluate = ("evaluate", "--lab", "lab.json", "--evaluators", "text_matching")
    try:
        first = _assay(environment, *evaluate, "--out", "first", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        _wait_for(lambda: list(workers.glob("*.sock")), "a worker was not serving", log=workers)
        assert "ready" in _worker_log(workers)

        second = _assay(environment, *evaluate, "--out", "second", cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        assert "'assay evaluate' in process" in _worker_log(workers), "the second command did not use the worker"
        for run in (first, second):  # the same report on the terminal, the same files
            assert "text_matching" in run.stdout and "HTML report:" in run.stdout
        assert sorted(p.name for p in (tmp_path / "second").iterdir()) == sorted(
            p.name for p in (tmp_path / "first").iterdir()
        )
        assert "Traceback" not in second.stderr

        missing = _assay(environment, "evaluate", "--lab", "absent.json", "--out", "x", cwd=tmp_path)
        assert missing.returncode == 2 and "absent.json" in missing.stderr  # exit status and error line come back
        assert _worker_log(workers).count("'assay evaluate' in process") == 2

        served = _worker_log(workers).count("in process")
        other = _assay({**environment, "ASSAY_SOMETHING_ELSE": "1"}, "evaluators", "list", cwd=tmp_path)
        assert other.returncode == 0 and "groundedness" in other.stdout
        assert _worker_log(workers).count("in process") == served, "another environment reached the worker"

        port = _free_port()  # a command that runs until interrupted: the sample RAG server
        serving = subprocess.Popen(
            [ASSAY, "serve-sample", "--port", str(port)], env=environment, cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _wait_for(lambda: _worker_log(workers).count("'assay serve-sample' in process") == 1, "no serve-sample run")
        _wait_for(lambda: _answers(port), "the sample server did not answer", 180)
        serving.send_signal(signal.SIGINT)  # as Ctrl-C in the terminal: the client passes it on to the command
        serving.communicate(timeout=60)
        assert serving.returncode in (0, 130)
        assert not _answers(port), "the command kept running after Ctrl-C"

        killed = subprocess.Popen(  # a SIGKILL cannot be passed on: the command must end with its caller
            [ASSAY, "serve-sample", "--port", str(port)], env=environment, cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _wait_for(lambda: _answers(port), "the second sample server did not answer", 180)
        assert _worker_log(workers).count("'assay serve-sample' in process") == 2
        killed.kill()
        killed.communicate(timeout=60)
        _wait_for(lambda: not _answers(port), "the command outlived its SIGKILLed caller", 30)
    finally:
        stop_server(Path(environment["PREFECT_HOME"]))
    try:
        _wait_for(lambda: not list(workers.glob("*.sock")), "the worker did not stop with the server", 60)
        assert "stopped: the kept Prefect server stopped" in _worker_log(workers)
    finally:
        shutil.rmtree(workers, ignore_errors=True)
