"""What one ``/check`` request may cost (issue 25, item 7): ``assay guardrail serve`` in a subprocess refuses an
oversized body (413), too many context items or too much text (422, at once, with the reason), and NaN or
Infinity (422 with the reason, never a 500 with a traceback); a check past its time budget is stopped (503)."""

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import httpx
import pytest
from fastapi.testclient import TestClient

from assay.apps.guardrail_service import create_app
from assay.budget import TimeBudgetExceeded
from assay.embeddings.engine import EmbeddingEngine
from assay.guardrail import Client
from assay.guardrail.checks import Guard
from assay.guardrail.config import ServiceLimits, parse_config
from assay.guardrail.embedding import BoundedEmbedder
from assay.testing.local_app import free_port
from assay.testing.processes import stop_group

CONFIG = {
    "calibrated_thresholds": {"groundedness": {"groundedness": 0.75}, "pii_leakage": {"model_passes": 0.5}},
    "evaluator_ids": ["groundedness", "pii_leakage"],
}
CONTEXT = ["Easy Access Saver: balances from £10,000 to £49,999 earn 3.25% AER. Interest is paid monthly."]
ANSWER = "Balances from £10,000 to £49,999 earn 3.25% AER."


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("guardrail-limits")
    config = folder / "guardrails.json"
    config.write_text(json.dumps(CONFIG))
    port, log = free_port(), folder / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "assay.apps.cli.main", "guardrail", "serve", "--config", str(config),
             "--port", str(port)],
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, env=os.environ.copy(),
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        with Client(base) as client:
            deadline = time.monotonic() + 120
            while not client.ready():
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        yield base
    finally:
        stop_group(process)


def _post(url: str, body: bytes, timeout: float = 10) -> httpx.Response:
    return httpx.post(f"{url}/check", content=body, headers={"content-type": "application/json"}, timeout=timeout)


def test_a_normal_request_is_checked(url: str) -> None:
    response = _post(url, json.dumps({"question": "Rate?", "answer": ANSWER, "context": CONTEXT}).encode())
    assert response.status_code == 200 and response.json()["verdict"] == "allow"


def test_a_body_over_the_limit_gets_413(url: str) -> None:
    response = _post(url, json.dumps({"question": "q", "answer": "x" * 2_000_000}).encode())
    assert response.status_code == 413 and "1048576" in response.json()["error"]


def test_100k_context_items_are_refused_at_once(url: str) -> None:
    """The audit's body: 500 KB, 100k items, 72 s of CPU before the limit."""
    body = json.dumps({"question": "q", "answer": "a", "context": ["a"] * 100_000}).encode()
    assert 400_000 < len(body) < 1024 * 1024
    started = time.monotonic()
    response = _post(url, body)
    assert time.monotonic() - started < 5
    assert response.status_code == 422
    error = response.json()["error"]
    assert "100000 items" in error and "limit is 100" in error and "max_context_items" in error


def test_too_much_text_is_refused(url: str) -> None:
    context = [f"Chunk {number}: " + "interest is paid monthly " * 40 for number in range(100)]
    response = _post(url, json.dumps({"question": "q", "answer": ANSWER, "context": context}).encode())
    assert response.status_code == 422 and "max_text_chars" in response.json()["error"]


@pytest.mark.parametrize(
    "body",
    [
        b'{"question": NaN, "answer": "a"}',
        b'{"question": "q", "answer": "a", "context": [Infinity]}',
        b'{"question": "q", "answer": -Infinity}',
        b'{"question": "q", "answer": "a", "extra": NaN}',
    ],
)
def test_nan_and_infinity_get_422_with_the_reason(url: str, body: bytes) -> None:
    response = _post(url, body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert "is not a JSON value" in error and ("NaN" in error or "Infinity" in error)
    assert "Traceback" not in response.text


def test_a_repeated_key_gets_422_naming_it(url: str) -> None:
    """JSON keeps the last of two answers: the guardrail would judge one the caller did not mean; refused like
    every other entry point refuses it."""
    response = _post(url, b'{"question": "q", "answer": "The fee is 5 EUR.", "answer": "ok"}')
    assert response.status_code == 422, response.text
    assert "the key 'answer' is repeated" in response.json()["error"]


def test_invalid_requests_name_the_field_and_echo_nothing(url: str) -> None:
    response = _post(url, json.dumps({"question": "Secret-marker-5521", "answer": 5}).encode())
    assert response.status_code == 422
    assert "answer: Input should be a valid string" in response.json()["error"]
    assert "Secret-marker" not in response.text
    assert _post(url, b'{"question": "q", "answer": "a"').json()["error"].startswith("invalid JSON")


def test_a_check_past_its_time_budget_is_stopped_with_503(engine: EmbeddingEngine) -> None:
    """The real model behind the guardrail's embedder; 1,000 new sentences take seconds, the budget is 0.2 s."""
    data = CONFIG | {"service": {"check_budget_s": 0.2}}
    embedder = BoundedEmbedder(engine.model, loader=lambda _: engine.encoder)
    guard = Guard(parse_config(data, source="<test>"), embedder_factory=lambda: embedder)
    guard.warm_up()
    context = [
        " ".join(f"Chunk {chunk} sentence {number} says the rate is {chunk}.{number}% AER." for number in range(10))
        for chunk in range(100)
    ]
    with TestClient(create_app(guard, warm_up=False)) as client:
        started = time.monotonic()
        response = client.post("/check", json={"question": "q", "answer": ANSWER, "context": context})
        elapsed = time.monotonic() - started
        assert response.status_code == 503, response.text
        assert "time budget of 0.2 s" in response.json()["error"] and elapsed < 3
        assert embedder.encoded_count < 500  # stopped, not finished late
        assert client.post("/check", json={"question": "q", "answer": ANSWER}).status_code == 200
    with pytest.raises(TimeBudgetExceeded):
        guard.check("q", ANSWER, [f"{text} Again." for text in context], time_budget_s=0.2)


def test_checks_take_turns_and_a_request_that_cannot_start_within_the_budget_gets_503(engine: EmbeddingEngine) -> None:
    """One check at a time per worker (checks are Python-bound: more at once share one interpreter lock and each
    costs more); a request still waiting when its budget is spent is shed with 503, never queued without end."""
    data = CONFIG | {"service": {"check_budget_s": 1.0, "concurrent_checks": 1}}
    guard = Guard(parse_config(data, source="<test>"), embedder_factory=lambda: engine)
    guard.warm_up()
    running, most = [0], [0]
    real_check = guard.check

    def slow_check(*args: object, **kwargs: object) -> object:
        running[0] += 1
        most[0] = max(most[0], running[0])
        try:
            time.sleep(0.3)
            return real_check(*args, **kwargs)
        finally:
            running[0] -= 1

    guard.check = slow_check  # type: ignore[method-assign]
    with TestClient(create_app(guard, warm_up=False)) as client, ThreadPoolExecutor(6) as pool:
        post = partial(client.post, "/check", json={"question": "q", "answer": ANSWER, "context": CONTEXT})
        statuses = [response.status_code for response in pool.map(lambda _: post(), range(6))]
    assert most[0] == 1
    assert statuses.count(200) >= 3 and 503 in statuses, statuses
    assert all(status in (200, 503) for status in statuses)


def test_service_limits_are_settings_with_defaults() -> None:
    assert parse_config(CONFIG, source="<test>").limits == ServiceLimits()
    limits = parse_config(CONFIG | {"service": {"max_context_items": 20}}, source="<test>").limits
    assert limits.max_context_items == 20 and limits.max_text_chars == ServiceLimits().max_text_chars
    refused = [
        ({"max_items": 5}, "unknown setting"),
        ({"check_budget_s": 0}, "positive"),
        ({"max_text_chars": 2.5}, "whole number"),
        ({"embedding_threads": True}, "positive"),
    ]
    for bad, expected in refused:
        with pytest.raises(ValueError, match=expected) as error:
            parse_config(CONFIG | {"service": bad}, source="g.json")
        assert str(error.value).startswith(f"g.json: service.{next(iter(bad))}")
