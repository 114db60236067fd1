import asyncio
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from assay import redaction
from assay.corpora import sample_data_path
from assay.embeddings import EmbeddingEngine
from assay.hosts import CallPolicy, Host, HostAnswer, HostError, create_host, default_host_config, resolve
from assay.hosts.sample_rag import NOT_FOUND_ANSWER, simulated_duration
from assay.models import ModelHost, TestCase, TestLab, TestLabRow, TestSuite

FAST = CallPolicy(concurrency=2, timeout_s=0.5, retries=2, backoff_s=0.01)


class ScriptedHost(Host):
    """Answers by script: 'ok', 'flaky' (fails once), 'slow' (times out), 'broken' (permanent error)."""

    type: ClassVar[str] = "scripted"
    description: ClassVar[str] = "test double"

    def __init__(self, config: ModelHost) -> None:
        super().__init__(config)
        self.calls: dict[str, int] = {}
        self.active = 0
        self.max_active = 0

    async def answer(self, case: TestCase) -> HostAnswer:
        self.calls[case.key] = self.calls.get(case.key, 0) + 1
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(0.02)
            if case.prompt == "slow":
                await asyncio.sleep(5)
            if case.prompt == "flaky" and self.calls[case.key] == 1:
                raise ConnectionError("connection reset")
            if case.prompt == "broken":
                raise HostError("400 bad request")
            if case.prompt == "verbose":
                raise HostError("502 <html>" + "x" * 1_000_000)
            if case.prompt in ("negative-cost", "infinite-cost"):
                return HostAnswer(actual_output="priced", cost=-1.0 if case.prompt == "negative-cost" else 1e400)
            return HostAnswer(actual_output=f"answer to {case.key}", cost=0.01)
        finally:
            self.active -= 1


def cases(*prompts: str) -> list[tuple[str, TestCase]]:
    return [("t", TestCase(key=f"c{i}", prompt=prompt)) for i, prompt in enumerate(prompts)]


def test_failures_are_recorded_per_case_and_never_abort() -> None:
    host = ScriptedHost(ModelHost(key="s", type="scripted"))
    rows = asyncio.run(resolve(host, cases("ok", "flaky", "slow", "broken", "ok", "ok"), FAST))
    assert [row.test_case.key for row in rows] == ["c0", "c1", "c2", "c3", "c4", "c5"]
    ok, flaky, slow, broken = rows[:4]
    assert ok.answered and ok.attempts == 1 and ok.actual_duration > 0 and ok.cost == 0.01
    assert flaky.answered and flaky.attempts == 2
    assert not slow.answered and "no answer within 0.5s" in slow.error and slow.attempts == 3
    assert broken.error == "400 bad request" and host.calls["c3"] == 1  # permanent errors are not retried
    assert host.max_active <= 2


def test_invalid_and_oversized_answers_are_recorded_per_case() -> None:
    """A megabyte error page is kept bounded; a negative or infinite cost is an error on its case, not a crash."""
    host = ScriptedHost(ModelHost(key="s", type="scripted"))
    rows = asyncio.run(resolve(host, cases("verbose", "negative-cost", "infinite-cost", "ok"), FAST))
    verbose, negative, infinite, ok = rows
    assert verbose.error.startswith("502 <html>xxx") and len(verbose.error) < 2_100
    assert "characters cut" in verbose.error
    assert not negative.answered and "cost" in negative.error
    assert not infinite.answered and "finite" in infinite.error
    assert ok.answered


def test_a_failing_prepare_marks_every_row() -> None:
    class Unprepared(ScriptedHost):
        async def prepare(self, cases: Sequence[TestCase]) -> None:
            raise RuntimeError("index missing")

    rows = asyncio.run(resolve(Unprepared(ModelHost(key="u", type="scripted")), cases("ok", "ok"), FAST))
    assert all(row.error == "host preparation failed: RuntimeError: index missing" for row in rows)


@pytest.fixture(scope="module")
def sample_suite() -> TestSuite:
    return TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())


def test_sample_rag_retrieves_and_answers_extractively(engine: EmbeddingEngine) -> None:
    host = create_host(default_host_config("sample-rag"), lambda: engine)
    question = TestCase(key="q", prompt="Which number do I call if my card is stolen?")
    out_of_scope = TestCase(key="o", prompt="What was the closing price of gold futures yesterday in Tokyo?")
    card, gold = asyncio.run(resolve(host, [("t", question), ("t", out_of_scope)]))
    assert card.context[0].doc_uri == "report-a-lost-or-stolen-card.md"
    assert [chunk.rank for chunk in card.context] == [0, 1, 2]
    assert "0800 555 0199" in card.actual_output
    assert card.input_tokens > card.output_tokens > 0 and card.cost == 0.0
    assert gold.actual_output == NOT_FOUND_ANSWER


def test_sample_rag_durations_are_simulated_and_reproducible(engine: EmbeddingEngine) -> None:
    """Wall-clock durations made two MRM runs on the same inputs differ (issue 7, item 14): the sample hosts
    report the time their work would take, the same in every run and larger for longer answers."""
    question = [("t", TestCase(key="q", prompt="Which number do I call if my card is stolen?"))]
    first, second = (
        asyncio.run(resolve(create_host(default_host_config("sample-rag"), lambda: engine), question))[0]
        for _ in range(2)
    )
    assert first.actual_duration == second.actual_duration
    assert first.actual_duration == simulated_duration(first.input_tokens, first.output_tokens)
    assert simulated_duration(100, 60) > simulated_duration(100, 20) > 0


def test_resolve_redacts_the_host_secret_from_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that echoes the rejected key must not put it on the row (issue 7, item 5)."""
    monkeypatch.setattr(redaction, "_names", {})
    monkeypatch.setattr(redaction, "_pattern", None)
    monkeypatch.setenv("SCRIPTED_API_KEY", "key-4c1d0e9a77b2")

    class Echoing(ScriptedHost):
        async def answer(self, case: TestCase) -> HostAnswer:
            raise HostError(f"401: invalid key {os.environ['SCRIPTED_API_KEY']}")

    host = Echoing(ModelHost(key="e", type="scripted", secret_ref="SCRIPTED_API_KEY"))
    (row,) = asyncio.run(resolve(host, cases("ok"), FAST))
    assert row.error == "401: invalid key [REDACTED:SCRIPTED_API_KEY]"


def test_keyword_system_is_the_weaker_one(sample_suite: TestSuite, engine: EmbeddingEngine) -> None:
    """Over the sample suite the dense system answers closer to the expected answers than the lexical one,
    as the demo leaderboard claims, and its retriever finds the expected documents."""
    in_scope = [(test.key, case) for test, case in sample_suite.cases() if case.expected_retrieved_doc_uris]

    def quality(host_type: str) -> tuple[float, float]:
        rows = asyncio.run(resolve(create_host(default_host_config(host_type), lambda: engine), in_scope))
        recall = [
            len(set(row.test_case.expected_retrieved_doc_uris) & {c.doc_uri for c in row.context})
            / len(row.test_case.expected_retrieved_doc_uris)
            for row in rows
        ]
        pairs = engine.embed([text for row in rows for text in (row.actual_output, row.test_case.expected_output)])
        similarity = [float(pairs[i] @ pairs[i + 1]) for i in range(0, len(pairs), 2)]
        return sum(recall) / len(recall), sum(similarity) / len(similarity)

    (dense_recall, dense_similarity), (_, keyword_similarity) = (
        quality("sample-rag"),
        quality("sample-rag-keyword"),
    )
    assert dense_recall >= 0.8
    assert dense_similarity > keyword_similarity + 0.03


def test_testlab_host_replays_answers(tmp_path: Path) -> None:
    case = TestCase(key="k1", prompt="What is the fee?")
    lab = TestLab(
        name="precomputed",
        models=[ModelHost(key="prod", type="testlab")],
        rows=[TestLabRow(test_case=case, model_key="prod", actual_output="£25", cost=0.002)],
    )
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(lab.model_dump(mode="json")))
    host = create_host(ModelHost(key="replay", type="testlab", settings={"lab": str(path)}))
    missing = TestCase(key="k2", prompt="Something else?")
    found, absent = asyncio.run(resolve(host, [("t", case), ("t", missing)]))
    assert (found.actual_output, found.cost, found.model_key) == ("£25", 0.002, "replay")
    assert absent.error == f"no precomputed answer for test case 'k2' in {path}"


def test_resolve_is_concurrent() -> None:
    host = ScriptedHost(ModelHost(key="s", type="scripted"))
    started = time.perf_counter()
    asyncio.run(resolve(host, cases(*["ok"] * 20), CallPolicy(concurrency=10)))
    assert time.perf_counter() - started < 0.02 * 20 / 2
    assert host.max_active == 10


def test_retry_delay_honours_retry_after_and_jitters_backoff() -> None:
    from assay.calls.errors import RetryableHostError
    from assay.calls.retry import retry_delay

    policy = CallPolicy(backoff_s=1.0, max_retry_after_s=5.0)
    limited = RetryableHostError("429", kind="rate_limited", retry_after=3.0)
    assert all(3.0 <= retry_delay(policy, 0, limited) <= 3.0 for _ in range(20))
    assert retry_delay(policy, 0, RetryableHostError("429", kind="rate_limited", retry_after=600)) <= 5.0
    delays = {retry_delay(policy, 2, ConnectionError("reset")) for _ in range(50)}
    assert all(0.0 <= delay <= 4.0 for delay in delays) and len(delays) > 40  # jittered, within the exponential cap


class DownHost(Host):
    """Refuses every connection until ``recover_after`` calls were made (never, by default)."""

    type: ClassVar[str] = "down-test-host"
    description: ClassVar[str] = "test double"
    recover_after: ClassVar[int | None] = None
    calls: ClassVar[int] = 0

    async def answer(self, case: TestCase) -> HostAnswer:
        DownHost.calls += 1
        if DownHost.recover_after is None or DownHost.calls <= DownHost.recover_after:
            raise ConnectionError("connection refused")
        return HostAnswer(actual_output="back")


BREAKER = CallPolicy(concurrency=4, timeout_s=1, retries=2, backoff_s=0.0, breaker_failures=5, breaker_cooldown_s=0.05,
                     breaker_max_pauses=2)  # fmt: skip


def test_a_host_that_stays_down_is_paused_then_its_cases_are_not_asked() -> None:
    DownHost.calls, DownHost.recover_after = 0, None
    rows = asyncio.run(resolve(DownHost(ModelHost(key="d", type="down-test-host")), cases(*["q"] * 100), BREAKER))
    assert len(rows) == 100 and not any(row.answered for row in rows)
    assert DownHost.calls < 40  # without the breaker: 100 cases x 3 attempts = 300 calls
    paused = [row for row in rows if row.error_kind == "circuit_open"]
    assert paused and all("circuit open" in row.error and "rerun" in row.error for row in paused)
    assert all(row.error_kind in ("connection", "circuit_open") for row in rows)


def test_a_host_that_recovers_after_a_pause_answers_the_rest() -> None:
    DownHost.calls, DownHost.recover_after = 0, 6
    rows = asyncio.run(resolve(DownHost(ModelHost(key="d", type="down-test-host")), cases(*["q"] * 40), BREAKER))
    assert sum(row.answered for row in rows) >= 38 and not any(row.error_kind == "circuit_open" for row in rows)


def test_a_refusal_after_a_retried_failure_records_every_attempt() -> None:
    class FlakyThenRefusing(ScriptedHost):
        async def answer(self, case: TestCase) -> HostAnswer:
            self.calls[case.key] = self.calls.get(case.key, 0) + 1
            if self.calls[case.key] == 1:
                raise ConnectionError("connection reset")
            raise HostError("400 bad request", "client_error")

    [row] = asyncio.run(resolve(FlakyThenRefusing(ModelHost(key="s", type="scripted")), cases("x"), FAST))
    assert (row.error_kind, row.attempts) == ("client_error", 2)
