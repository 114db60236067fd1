"""The fault test of issue 8, for every protocol: 300 cases against a local server speaking the protocol that
injects 30% faults of mixed kinds (429 with Retry-After, 500, 503, time-outs, dropped connections, garbage
JSON, empty answers). Nothing is lost, every failure says why and of which kind, and a rerun of the same run
asks again only for the errored cases and finishes them."""

import random
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from assay.hosts import CallPolicy
from assay.labs import build_test_lab, load_checkpoint
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.storage import LocalObjectStore
from assay.testing.assistants_server import Assistant, AssistantFile, AssistantsServer, serve_assistants
from assay.testing.bedrock_server import BedrockServer, serve_bedrock
from assay.testing.h2ogpte_server import H2OGPTeServer, serve_h2ogpte
from assay.testing.http_rag_server import MAPPING, HttpRagServer, serve_http_rag
from assay.testing.ollama_server import OllamaServer, serve_ollama
from assay.testing.openai_server import OpenAIServer, serve_openai

CASES = 300
FAULT_SHARE = 0.3
FAULTS = ["429", "500", "503", "slow", "drop", "garbage", "empty"]
RETRYABLE_KINDS = {"rate_limited", "server_error", "timeout", "connection"}
PERMANENT_KINDS = {"malformed_response", "empty_answer"}
SECRET = "fault-test-5ecret-0123456789"
SLOW_S = 6.0

Protocol = Callable[[list[str | None], pytest.MonkeyPatch], AbstractContextManager[ModelHost]]


@contextmanager
def _openai(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    with serve_openai(OpenAIServer(slow_s=SLOW_S, retry_after_s=0.05, plan=plan)) as server:
        yield ModelHost(key="sut", type="openai-compatible", url=server.url, llm_model_name="local-model")


@contextmanager
def _azure(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    env.setenv("ASSAY_FAULT_KEY", SECRET)
    with serve_openai(OpenAIServer(slow_s=SLOW_S, retry_after_s=0.05, plan=plan, azure_api_key=SECRET)) as server:
        yield ModelHost(key="sut", type="azure-openai", url=server.azure_url, llm_model_name="gpt-4o-prod",
                        secret_ref="ASSAY_FAULT_KEY", settings={"api_version": "2024-10-21"})  # fmt: skip


@contextmanager
def _assistants(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    env.setenv("ASSAY_FAULT_KEY", SECRET)
    files = {"file-1": AssistantFile("handbook.pdf", ["Branches open at 9 on weekdays."])}
    server = AssistantsServer(assistants={"asst_rag": Assistant(files=files)}, api_key=SECRET, slow_s=SLOW_S,
                              retry_after_s=0.05, plan=plan)  # fmt: skip
    with serve_assistants(server) as running:
        yield ModelHost(key="sut", type="openai-assistants", url=running.url, secret_ref="ASSAY_FAULT_KEY",
                        settings={"assistant_id": "asst_rag", "poll_interval_s": 0.01})  # fmt: skip


@contextmanager
def _ollama(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    with serve_ollama(OllamaServer(slow_s=SLOW_S, retry_after_s=0.05, plan=plan)) as server:
        yield ModelHost(key="sut", type="ollama", url=server.url, llm_model_name="llama3.2")


@contextmanager
def _bedrock(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIAASSAYTEST0000000", "AWS_SECRET_ACCESS_KEY": SECRET,
                        "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                        "AWS_EC2_METADATA_DISABLED": "true"}.items():  # fmt: skip
        env.setenv(name, value)
    with serve_bedrock(BedrockServer(slow_s=SLOW_S, retry_after_s=0.05, plan=plan)) as server:
        yield ModelHost(key="sut", type="bedrock-kb", url=server.url,
                        llm_model_name="anthropic.claude-3-haiku-20240307-v1:0",
                        settings={"region": "eu-west-1", "knowledge_base_id": "KB12345678"})  # fmt: skip


@contextmanager
def _h2ogpte(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    env.setenv("ASSAY_FAULT_KEY", SECRET)
    with serve_h2ogpte(H2OGPTeServer(api_key=SECRET, slow_s=SLOW_S, plan=plan)) as server:
        yield ModelHost(key="sut", type="h2ogpte-llm", url=server.url, secret_ref="ASSAY_FAULT_KEY",
                        llm_model_name="h2oai/h2ogpt-4096-llama2-70b-chat")  # fmt: skip


@contextmanager
def _http_rag(plan: list[str | None], env: pytest.MonkeyPatch) -> Iterator[ModelHost]:
    with serve_http_rag(HttpRagServer(slow_s=SLOW_S, retry_after_s=0.05, plan=plan)) as server:
        yield ModelHost(key="sut", type="http-rag", url=server.url, settings={"mapping": MAPPING})


PROTOCOLS: dict[str, Protocol] = {
    "openai-compatible": _openai,
    "azure-openai": _azure,
    "openai-assistants": _assistants,
    "ollama": _ollama,
    "bedrock-kb": _bedrock,
    "h2ogpte-llm": _h2ogpte,
    "http-rag": _http_rag,
}


def _plan(seed: int) -> list[str | None]:
    rng = random.Random(seed)
    faults = [rng.choice(FAULTS) for _ in range(int(CASES * FAULT_SHARE))]
    plan: list[str | None] = [*faults, *[None] * (CASES - len(faults))]
    rng.shuffle(plan)
    return plan


@pytest.mark.timeout(300)
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_300_cases_with_30_percent_faults_lose_nothing_and_a_rerun_finishes_them(
    protocol: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = TestSuite(
        name="faults",
        tests=[Test(key="t", test_cases=[TestCase(key=f"c{i:03d}", prompt=f"question {i}") for i in range(CASES)])],
    )
    policy = CallPolicy(concurrency=16, timeout_s=4.0, retries=1, backoff_s=0.01, breaker_failures=0)
    store = LocalObjectStore(tmp_path / "store")
    with PROTOCOLS[protocol](_plan(3), monkeypatch) as host:
        first = build_test_lab(suite, [host], run_id="faults", store=store, policy=policy)

        assert [row.test_case.key for row in first.rows] == [case.key for _, case in suite.cases()]
        errored = [row for row in first.rows if not row.answered]
        assert errored, "the plan injects more faults than one retry can absorb"
        assert all(row.error and row.error_kind for row in errored)
        kinds = {row.error_kind for row in errored}
        assert kinds & PERMANENT_KINDS, kinds  # recorded with their reason once the retries are spent
        assert kinds <= RETRYABLE_KINDS | PERMANENT_KINDS, kinds
        answered_first = {row.test_case.key: row for row in first.rows if row.answered}
        assert len(answered_first) >= CASES // 2

        rerun = build_test_lab(suite, [host], run_id="faults", store=store, policy=policy)

    unanswered = {row.test_case.key: (row.error_kind, row.error) for row in rerun.rows if not row.answered}
    assert len(rerun.rows) == CASES and not unanswered, unanswered
    # the answered cases were not asked again: their rows (durations and raw replies included) are the first run's
    assert all(row == answered_first[row.test_case.key] for row in rerun.rows if row.test_case.key in answered_first)
    checkpoint = load_checkpoint(store, "faults", "sut")
    assert not checkpoint.rejected and set(answered_first) <= set(checkpoint.rows)
    assert all(SECRET not in row.model_dump_json() for row in (*first.rows, *rerun.rows))
