"""The fault test of issue 8: 300 cases against a local chat-completions server that injects 30% faults of
mixed kinds. Nothing is lost, every failure says why (and of which kind), and a rerun of the same run asks
again only for the errored cases, finishing them."""

import random
from pathlib import Path

import pytest

from assay.hosts import CallPolicy
from assay.labs import build_test_lab, load_checkpoint
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.storage import LocalObjectStore
from tests.support.openai_server import OpenAIServer, serve_openai

CASES = 300
FAULT_SHARE = 0.3
FAULTS = ["429", "500", "503", "slow", "drop", "garbage", "empty_choices"]
RETRYABLE_KINDS = {"rate_limited", "server_error", "timeout", "connection"}


@pytest.mark.timeout(180)
def test_300_cases_with_30_percent_faults_lose_nothing_and_a_rerun_finishes_them(tmp_path: Path) -> None:
    rng = random.Random(3)
    faults = [rng.choice(FAULTS) for _ in range(int(CASES * FAULT_SHARE))]
    plan = [*faults, *[None] * (CASES - len(faults))]
    rng.shuffle(plan)
    suite = TestSuite(
        name="faults",
        tests=[Test(key="t", test_cases=[TestCase(key=f"c{i:03d}", prompt=f"question {i}") for i in range(CASES)])],
    )
    policy = CallPolicy(concurrency=16, timeout_s=1.0, retries=1, backoff_s=0.01)
    store = LocalObjectStore(tmp_path / "store")
    with serve_openai(OpenAIServer(slow_s=3.0, retry_after_s=0.05, plan=plan)) as server:
        host = ModelHost(key="local", type="openai-compatible", url=server.url, llm_model_name="local-model")
        first = build_test_lab(suite, [host], run_id="faults", store=store, policy=policy)

        assert len(first.rows) == CASES and {row.test_case.key for row in first.rows} == {
            case.key for _, case in suite.cases()
        }
        errored = [row for row in first.rows if not row.answered]
        assert errored, "the plan injects more faults than one retry can absorb"
        assert all(row.error and row.error_kind for row in errored)
        kinds = {row.error_kind for row in errored}
        assert kinds & {"malformed_response", "empty_answer"}  # garbage / empty choices: recorded, not retried
        assert kinds <= RETRYABLE_KINDS | {"malformed_response", "empty_answer"}
        answered_first = {row.test_case.key for row in first.rows if row.answered}

        requests_before = len(server.requests)
        rerun = build_test_lab(suite, [host], run_id="faults", store=store, policy=policy)

    assert all(row.answered for row in rerun.rows) and len(rerun.rows) == CASES
    assert len(server.requests) - requests_before == len(errored)  # only the errored cases were asked again
    checkpoint = load_checkpoint(store, "faults", "local")
    assert not checkpoint.rejected and answered_first <= set(checkpoint.rows)
