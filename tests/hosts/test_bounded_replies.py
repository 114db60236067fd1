"""Bounded replies (issue 25, item 2): a 50 MB reply, with or without a declared length, or a small gzip body that
inflates to 50 MB, is read only up to ``hosts.max_reply_bytes`` (1 MB here) and recorded as
``response_too_large`` on its case, never retried; the other cases and the other hosts of the run are answered,
and memory stays bounded.

The server streams its replies in 64 KB pieces (nothing of 50 MB is ever built in memory) and stops when the
client hangs up."""

import asyncio
import json
import os
import subprocess
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from assay.guardrail.client import Client as GuardrailClient
from assay.guardrail.client import GuardrailError
from assay.hosts import CallPolicy, create_host, resolve
from assay.judges.client import JudgeClient
from assay.judges.templates import builtin_templates
from assay.labs import build_test_lab
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.models.judges import JudgeEndpoint
from assay.testing.local_app import serving_handler

ROOT = Path(__file__).resolve().parents[2]
ASSAY = ROOT / ".venv" / "bin" / "assay"
LIMIT = 1024 * 1024
HUGE = 50 * 1024 * 1024
PIECE = b"x" * 65536
POLICY = CallPolicy(concurrency=4, timeout_s=20.0, retries=2, backoff_s=0.01)


def _gzip_bomb() -> bytes:
    """50 MB of zeros, gzip-compressed (about 50 KB), built piece by piece."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(65536)
    return b"".join(compressor.compress(zeros) for _ in range(HUGE // len(zeros))) + compressor.flush()


BOMB = _gzip_bomb()


def _answer(path: str, text: str) -> dict[str, Any]:
    if path.startswith("/rag"):
        return {"answer": text}
    if path.startswith("/api/chat"):
        return {"model": "m", "message": {"role": "assistant", "content": text}, "done": True}
    if path.startswith("/check"):
        return {"verdict": "allow"}
    verdict = json.dumps({"score": 1, "reason": "fine"})
    return {"choices": [{"message": {"role": "assistant", "content": verdict if "judge" in path else text}}]}


class _Replies(BaseHTTPRequestHandler):
    """Chat completions (/v1), http-rag (/rag), ollama (/api/chat) and guardrail (/check) replies; the request
    body picks the reply: ``big`` (50 MB, no length), ``declared`` (50 MB, with its length), ``bomb`` (gzip),
    else a normal answer."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
        try:
            if "declared" in body:
                self._head({"content-length": str(HUGE)})
                self._pieces()
            elif "big" in body:
                self._head({})  # HTTP/1.0: the body ends when the connection closes
                self._pieces()
            elif "bomb" in body:
                self._head({"content-encoding": "gzip", "content-length": str(len(BOMB))})
                self.wfile.write(BOMB)
            else:
                reply = json.dumps(_answer(self.path, "a short answer")).encode()
                self._head({"content-length": str(len(reply))})
                self.wfile.write(reply)
        except OSError:  # the client hung up: exactly what should happen
            pass

    def _head(self, headers: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _pieces(self) -> None:
        self.wfile.write(b'{"choices": [{"message": {"role": "assistant", "content": "')
        for _ in range(HUGE // len(PIECE)):
            self.wfile.write(PIECE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving_handler(_Replies) as url:
        yield url


@pytest.fixture(autouse=True)
def _one_megabyte(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOSTS__MAX_REPLY_BYTES", str(LIMIT))


CASES = [TestCase(key=key, prompt=f"please answer {key}") for key in ("small", "big", "declared", "bomb", "after")]


def _resolve(config: ModelHost) -> dict[str, Any]:
    started = time.perf_counter()
    rows = asyncio.run(resolve(create_host(config), [("t", case) for case in CASES], POLICY))
    assert time.perf_counter() - started < 20
    return {row.test_case.key: row for row in rows}


def _check_rows(rows: dict[str, Any]) -> None:
    for key in ("big", "declared", "bomb"):
        row = rows[key]
        assert row.error_kind == "response_too_large" and row.attempts == 1, (key, row.error)
        assert f"longer than {LIMIT} bytes" in row.error and "hosts.max_reply_bytes" in row.error
    assert rows["small"].actual_output == "a short answer" and rows["after"].actual_output == "a short answer"


@pytest.mark.parametrize(
    "config",
    [
        {"type": "openai-compatible", "url": "{server}/v1", "llm_model_name": "m"},
        {
            "type": "http-rag",
            "url": "{server}/rag",
            "settings": {"body": {"q": "{{prompt}}"}, "mapping": {"answer": "$.answer"}},
        },
        {"type": "ollama", "url": "{server}", "llm_model_name": "m"},
    ],
    ids=lambda config: config["type"],
)
def test_a_reply_past_the_limit_is_recorded_and_the_others_are_answered(server: str, config: dict[str, Any]) -> None:
    fields = {**config, "url": config["url"].format(server=server)}
    _check_rows(_resolve(ModelHost(key="sut", **fields)))


def test_the_other_hosts_of_the_run_go_on(server: str) -> None:
    suite = TestSuite(name="s", tests=[Test(key="t", documents=[], test_cases=CASES[:2])])
    huge = ModelHost(key="huge", type="openai-compatible", url=f"{server}/v1", llm_model_name="m")
    fine = ModelHost(key="fine", type="openai-compatible", url=f"{server}/v1", llm_model_name="m",
                     settings={"system_prompt": "short"})  # fmt: skip
    lab = build_test_lab(suite, [huge, fine], run_id="bounded", policy=POLICY)
    kinds = {(row.model_key, row.test_case.key): row.error_kind for row in lab.rows}
    assert kinds == {("huge", "small"): None, ("huge", "big"): "response_too_large",
                     ("fine", "small"): None, ("fine", "big"): "response_too_large"}  # fmt: skip


def test_a_judge_reply_past_the_limit_is_recorded(server: str) -> None:
    judge = JudgeClient(JudgeEndpoint(base_url=f"{server}/judge/v1", model="m"), policy=POLICY)
    template = next(iter(builtin_templates().values()))
    call = judge.run(lambda: judge.ask(template, {name: "big" for name in template.inputs}))
    assert call.error_kind == "response_too_large" and call.attempts == 1, call.error


def test_the_guardrail_client_refuses_a_reply_past_the_limit(server: str) -> None:
    with GuardrailClient(server) as guard, pytest.raises(GuardrailError, match="longer than"):
        guard.check("a question", "big")


def test_the_command_line_stays_small_and_fast(server: str, tmp_path: Path) -> None:
    """``assay hosts check`` on a host answering 50 MB: fails in seconds, naming the limit, with about the
    memory of a normal probe (peak RSS measured by the kernel for the child alone)."""
    env = {**os.environ, "ASSAY_HOSTS__MAX_REPLY_BYTES": str(LIMIT), "ASSAY_HOME": str(tmp_path / "home")}
    peaks = {}
    for probe in ("small", "big"):
        path = tmp_path / f"{probe}.json"
        path.write_text(json.dumps({"key": probe, "type": "openai-compatible", "url": f"{server}/v1",
                                    "llm_model_name": "m"}))  # fmt: skip
        started = time.perf_counter()
        process = subprocess.Popen([str(ASSAY), "hosts", "check", str(path), "--prompt", probe], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        stderr = process.stderr.read() if process.stderr else ""
        peaks[probe] = usage.ru_maxrss / 1024  # kilobytes on Linux
        if probe == "big":
            assert os.waitstatus_to_exitcode(status) == 1 and "longer than" in stderr, stderr
            assert seconds < 60
        else:
            assert os.waitstatus_to_exitcode(status) == 0, stderr
    assert peaks["big"] < peaks["small"] + 64, peaks  # the 50 MB reply added less than 64 MB
