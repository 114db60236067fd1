"""SIGTERM ends `assay evaluate` while a host is still sending a long reply (issue 25, item 2: the audit's run
ignored it for ~15 CPU-minutes while a 100 MB reply was read)."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from assay.testing.local_app import serving_handler

ASSAY = str(Path(sys.executable).parent / "assay")


class _Trickle(BaseHTTPRequestHandler):
    """A chat-completions server that starts a reply and then sends 64 KB every 0.2 s, without end."""

    started = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.started.set()
        try:
            self.wfile.write(b'{"choices": [{"message": {"role": "assistant", "content": "')
            while True:
                self.wfile.write(b"x" * 65536)
                time.sleep(0.2)
        except OSError:  # the client went away
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def trickle() -> Iterator[str]:
    _Trickle.started = threading.Event()
    with serving_handler(_Trickle) as url:
        yield f"{url}/v1"


def test_sigterm_ends_an_evaluation_waiting_on_a_long_reply(trickle: str, tmp_path: Path) -> None:
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"key": "slow", "type": "openai-compatible", "url": trickle, "llm_model_name": "m",
                                "calls": {"timeout_s": 600, "retries": 0}}))  # fmt: skip
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"name": "s", "tests": [{"key": "t", "test_cases": [{"key": "c", "prompt": "q"}]}]}))
    environment = {**os.environ, "ASSAY_HOME": str(tmp_path / "home"), "ASSAY_HOSTS__MAX_REPLY_BYTES": str(10**9)}
    log = tmp_path / "assay.log"  # a file, not a pipe nobody reads: a full pipe would stall the command
    command = [ASSAY, "--debug", "evaluate", "--suite", str(suite), "--host", str(host),
               "--evaluators", "text_matching", "--out", str(tmp_path / "out")]  # fmt: skip
    process = _asking_the_host(command, environment, log)
    try:
        time.sleep(1.0)  # well inside the reply
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        ended_after = time.monotonic() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    # the temporary Prefect server the command started is stopped with it, not left running for nobody
    deadline = time.monotonic() + 30
    while (left := _processes_of(tmp_path / "home")) and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left running after the command ended: {left}"
    assert process.returncode == 143, log.read_text()[-2000:]
    assert ended_after < 30


def _asking_the_host(command: list[str], environment: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """The command, started and waiting on the host's reply."""
    with log.open("w") as output:
        process = subprocess.Popen(command, env=environment, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 540  # the temporary Prefect server starts slowly on a busy machine
    while not _Trickle.started.wait(1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"the host was never asked (exit {process.returncode}): {log.read_text()[-2000:]}")
    return process


def _processes_of(home: Path) -> list[int]:
    """Processes whose environment holds ``ASSAY_HOME=home``: the command's children."""
    marker = f"ASSAY_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
