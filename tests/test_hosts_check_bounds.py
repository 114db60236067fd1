"""Issue 25 item 14: ``assay hosts check`` and ``assay guardrail check`` end within their bounds and say what
went wrong.

An ``h2ogpte-llm`` host pointing at a server that is not h2oGPTe (a plain 404, an OpenAI-compatible server, a
port that accepts and never answers) used to hang two minutes, then print ``TimeoutError:`` with no message:
the h2ogpte client's first request waits up to an hour. The host now asks ``/rpc/meta`` itself, bounded by
its connect time-out, and names the URL, what was expected and what answered. A probe that runs past its
time-out names the URL and the limit. ``guardrail check`` calls no service: its time goes to loading the
embedding model (torch and sentence-transformers), which ``--timeout`` now bounds, saying so.
"""

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.local_app import running_app
from assay.testing.openai_server import OpenAIServer, serve_openai

runner = CliRunner()
ENV = "ASSAY_TEST_H2OGPTE_KEY"
REPO = Path(__file__).resolve().parents[1]


@contextmanager
def plain_404() -> Iterator[str]:
    """A web server that answers every path with a plain-text 404."""
    web = FastAPI()

    @web.get("/{path:path}")
    async def anything(path: str) -> PlainTextResponse:
        return PlainTextResponse("nothing here", status_code=404)

    with running_app(web) as url:
        yield url


@contextmanager
def silent_port() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def _h2ogpte_file(tmp_path: Path, url: str, **settings: Any) -> Path:
    path = tmp_path / "h2ogpte.json"
    path.write_text(json.dumps({"key": "gpte", "type": "h2ogpte-llm", "url": url, "secret_ref": ENV,
                                "llm_model_name": "m", "settings": settings}))  # fmt: skip
    return path


def _check(file: Path, *options: str) -> tuple[Any, float]:
    started = time.monotonic()
    result = runner.invoke(app, ["hosts", "check", str(file), *options])
    return result, time.monotonic() - started


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "h2o-test-key")


def test_h2ogpte_at_a_plain_404_server_says_what_answered(tmp_path: Path) -> None:
    with plain_404() as url:
        result, took = _check(_h2ogpte_file(tmp_path, url))
    assert result.exit_code == 1, result.output
    assert f"GET {url}/rpc/meta" in result.output and "HTTP 404 text/plain" in result.output
    assert "'nothing here'" in result.output and "expected a JSON object with the server's 'version'" in result.output
    assert took < 30


def test_h2ogpte_at_an_openai_compatible_server_says_what_answered(tmp_path: Path) -> None:
    with serve_openai(OpenAIServer()) as server:
        base = server.url.removesuffix("/v1")
        result, took = _check(_h2ogpte_file(tmp_path, base))
    assert result.exit_code == 1, result.output
    assert f"GET {base}/rpc/meta" in result.output and "HTTP 404 application/json" in result.output
    assert "is 'url' the address of an h2oGPTe server?" in result.output
    assert took < 30


def test_h2ogpte_at_a_port_that_never_answers_is_bounded_by_the_connect_timeout(tmp_path: Path) -> None:
    with silent_port() as url:
        result, took = _check(_h2ogpte_file(tmp_path, url, connect_timeout=1))
    assert result.exit_code == 1, result.output
    assert f"GET {url}/rpc/meta: no reply within 1s (settings.connect_timeout)" in result.output
    assert "diagnosis: timeout" in result.output
    assert took < 20  # was two minutes


def test_a_probe_past_the_hosts_timeout_names_the_url_and_the_limit(tmp_path: Path) -> None:
    with serve_openai(OpenAIServer(slow_s=5.0, plan=["slow"])) as server:
        file = tmp_path / "slow.json"
        file.write_text(json.dumps({"key": "slow", "type": "openai-compatible", "url": server.url,
                                    "llm_model_name": "local-model", "calls": {"timeout_s": 1}}))  # fmt: skip
        result, took = _check(file)
    assert result.exit_code == 1, result.output
    assert f"TimeoutError: no reply from {server.url} within 1s (the host file's calls.timeout_s)" in result.output
    assert took < 5


def _guardrail_config(tmp_path: Path, evaluators: dict[str, dict[str, float]]) -> Path:
    path = tmp_path / "guardrails.json"
    path.write_text(json.dumps({"calibrated_thresholds": evaluators, "evaluator_ids": sorted(evaluators)}))
    return path


def test_guardrail_check_still_loading_its_model_stops_at_the_timeout_and_says_so(tmp_path: Path) -> None:
    """A fresh process: importing torch and sentence-transformers alone takes longer than the 0.5 s allowed."""
    config = _guardrail_config(tmp_path, {"groundedness": {"groundedness": 0.5}})
    arguments = ["guardrail", "check", "--config", str(config), "--question", "When do you open?",
                 "--answer", "We open at 9.", "--context", "Branches open at 9.", "--timeout", "0.5"]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "assay.apps.cli.main", *arguments], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={"ASSAY_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
                                                       "ASSAY_WARM_WORKER": "off"})  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "no verdict within" in message and "(--timeout 0.5)" in message
    assert "loading the embedding model 'all-MiniLM-L6-v2'" in message and "groundedness" in message
    assert "Traceback" not in done.stderr
    assert took < 60


def test_guardrail_check_without_models_gives_its_verdict_within_the_timeout(tmp_path: Path) -> None:
    config = _guardrail_config(tmp_path, {"pii_leakage": {"model_passes": 0.5}})
    result = runner.invoke(app, ["guardrail", "check", "--config", str(config), "--question", "q?",
                                 "--answer", "Call me on 020 7946 0958.", "--timeout", "30"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "verdict:" in result.output
