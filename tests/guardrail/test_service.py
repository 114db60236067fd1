"""The guardrail service end to end: ``assay guardrail serve`` in a subprocess, the sync and async clients."""

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from assay.apps.guardrail_service import create_app
from assay.guardrail import AsyncClient, Client, GuardrailError
from assay.guardrail.checks import Guard
from assay.guardrail.config import parse_config
from assay.models import RetrievedChunk
from assay.testing.local_app import free_port
from assay.testing.processes import stop_group
from tests.support.docs_examples import python_examples

CONTEXT = ["Easy Access Saver: balances from £10,000 to £49,999 earn 3.25% AER. Interest is paid monthly."]
SECRET_ANSWER = "Zebra-marker-7731 pays 3.25% AER; write to jane.doe@example.com."
SECRET_QUESTION = "Quokka-marker-4410 what rate?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("guardrail")
    config = folder / "guardrails.json"
    config.write_text(json.dumps({
        "calibrated_thresholds": {"groundedness": {"groundedness": 0.75}, "pii_leakage": {"model_passes": 0.5}},
        "evaluator_ids": ["groundedness", "pii_leakage"],
    }))  # fmt: skip
    port, log = free_port(), folder / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay.apps.cli.main", "guardrail", "serve", "--config", str(config),
             "--port", str(port), "--max-body-bytes", "4096"],
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, env=os.environ.copy(),
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        with Client(url) as client:
            deadline = time.monotonic() + 90
            while not client.ready():
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield url, log
    finally:
        stop_group(process)


def test_health_and_sync_client_blocks_a_leak(server: tuple[str, Path]) -> None:
    url, _ = server
    assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{url}/readyz").status_code == 200
    with Client(url) as client:
        result = client.check(SECRET_QUESTION, SECRET_ANSWER, CONTEXT)
    assert result.verdict == "block"
    assert result.evaluator("pii_leakage").metrics[0].passed is False


def test_the_docs_client_example_runs_against_the_service(server: tuple[str, Path]) -> None:
    """The guardrail page's Python example, as an application would run it, pointed at this service."""
    (example,) = python_examples("how-to/guardrail.md")
    assert "http://127.0.0.1:8700" in example
    chunks = [RetrievedChunk(text=text) for text in CONTEXT]
    scope = {"question": SECRET_QUESTION, "answer": SECRET_ANSWER, "chunks": chunks}
    exec(compile(example.replace("http://127.0.0.1:8700", server[0]), "docs/how-to/guardrail.md", "exec"), scope)
    assert scope["result"].verdict == "block" and scope["result"].reasons


def test_async_client_allows_a_grounded_answer(server: tuple[str, Path]) -> None:
    async def run() -> str:
        async with AsyncClient(server[0]) as client:
            results = await asyncio.gather(
                *(client.check("Rate?", "Balances from £10,000 to £49,999 earn 3.25% AER.", CONTEXT) for _ in range(3))
            )
        return ",".join(result.verdict for result in results)

    assert asyncio.run(run()) == "allow,allow,allow"


def test_oversized_and_malformed_requests(server: tuple[str, Path]) -> None:
    url, _ = server
    big = httpx.post(f"{url}/check", json={"question": "q", "answer": "x" * 5000})
    assert big.status_code == 413 and "4096" in big.json()["error"]
    streamed = httpx.post(f"{url}/check", content=iter([b'{"question": "q", "answer": "', b"y" * 5000, b'"}']))
    assert streamed.status_code == 413
    bad = httpx.post(f"{url}/check", json={"question": "q"})
    assert bad.status_code == 422 and "answer" in bad.text
    with Client(url) as client, pytest.raises(GuardrailError) as error:
        client.check("q", "z" * 5000)
    assert error.value.status == 413


def test_log_has_lengths_but_never_the_checked_text(server: tuple[str, Path]) -> None:
    url, log = server
    with Client(url) as client:
        client.check(SECRET_QUESTION, SECRET_ANSWER, CONTEXT)
    time.sleep(0.2)
    text = log.read_text()
    assert "Zebra-marker" not in text and "Quokka-marker" not in text and "jane.doe" not in text
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    checks = [line for line in lines if line.get("path") == "/check" and line.get("verdict") == "block"]
    assert checks and checks[-1]["answer_chars"] == len(SECRET_ANSWER) and checks[-1]["request_id"]


def test_not_ready_until_warmed_up() -> None:
    data = {"calibrated_thresholds": {"pii_leakage": {"model_passes": 0.5}}, "evaluator_ids": ["pii_leakage"]}
    guard = Guard(parse_config(data, source="<test>"))
    with TestClient(create_app(guard, warm_up=False)) as client:
        assert client.get("/readyz").status_code == 503
        assert client.post("/check", json={"question": "q", "answer": "a"}).status_code == 503
        guard.warm_up()
        assert client.get("/readyz").status_code == 200
        assert client.post("/check", json={"question": "q", "answer": "a"}).json()["verdict"] == "allow"
