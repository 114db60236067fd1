"""Checks every LLM-judged evaluator must pass besides the generic conformance suite: without a judge it says
so for every case; with one, each judged case keeps its evidence; a rerun is served from the cache; a reply
that does not parse leaves the case unscored with the reason, never a zero."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator, evaluator_class, evaluator_ids, run_evaluator
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine
from assay.judges import NOT_CONFIGURED
from assay.judges.client import open_judge
from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import endpoint_for

JUDGED = [evaluator_id for evaluator_id in evaluator_ids() if "llm" in evaluator_class(evaluator_id).spec.needs]


@pytest.fixture(scope="module")
def judge_server() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer()) as running:
        yield running


@pytest.fixture(scope="module")
def malformed_judge() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer(force="malformed")) as running:
        yield running


def _services(engine: EmbeddingEngine, server: JudgeServer | None, cache: Path | None) -> Services:
    if server is None:
        return Services(embedder_factory=lambda: engine)
    endpoint = endpoint_for(server)
    return Services(embedder_factory=lambda: engine, judge_factory=lambda: open_judge(endpoint, cache))


def _good(evaluator_id: str) -> CaseContext:
    return CaseContext.build(**evaluator_class(evaluator_id).golden["good"])


def test_there_are_judged_evaluators() -> None:
    assert "sexism" in JUDGED


@pytest.mark.parametrize("evaluator_id", JUDGED)
def test_without_a_judge_every_case_is_unavailable_with_the_reason(evaluator_id: str, engine: EmbeddingEngine) -> None:
    evaluator = build_evaluator(evaluator_id, _services(engine, None, None))
    assert evaluator.unavailable_reason() == NOT_CONFIGURED
    row = TestLabRow(test_case=TestCase(key="g", prompt="q", expected_output="e"), model_key="m", actual_output="a")
    result = run_evaluator(evaluator, TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=[row]))
    reason = result.rows[0].unscored_reason
    assert reason == NOT_CONFIGURED or reason.startswith(("missing input", "not applicable"))
    assert all(value is None for value in result.rows[0].scores.values())


@pytest.mark.parametrize("evaluator_id", JUDGED)
def test_judged_cases_keep_evidence_and_a_rerun_asks_nothing(
    evaluator_id: str, engine: EmbeddingEngine, judge_server: JudgeServer, tmp_path: Path
) -> None:
    case = _good(evaluator_id)
    first = build_evaluator(evaluator_id, _services(engine, judge_server, tmp_path))
    first.prepare([case])
    outcome = score_case(first, case)
    assert outcome.unscored_reason is None, outcome.unscored_reason
    evidence = outcome.details["judge"]
    assert evidence and all(call["messages"] and call["raw_reply"] and call["verdict"] for call in evidence)
    assert all(call["template"] and call["template_version"] for call in evidence)
    summary = first.judge_summary()
    assert summary is not None and summary.account.calls >= 1 and summary.templates
    second = build_evaluator(evaluator_id, _services(engine, judge_server, tmp_path))
    second.prepare([case])
    assert score_case(second, case).scores == outcome.scores
    account = second.judge_summary().account  # type: ignore[union-attr]
    assert account.calls == 0 and account.cache_hits == summary.account.calls - summary.account.repairs


@pytest.mark.parametrize("evaluator_id", JUDGED)
def test_an_unparseable_reply_leaves_the_case_unscored_with_the_reason(
    evaluator_id: str, engine: EmbeddingEngine, malformed_judge: JudgeServer
) -> None:
    case = _good(evaluator_id)
    evaluator = build_evaluator(evaluator_id, _services(engine, malformed_judge, None))
    evaluator.prepare([case])
    outcome = score_case(evaluator, case)
    assert outcome.unscored_reason is not None and "unparseable" in outcome.unscored_reason
    primary = evaluator.spec.primary_metric.key
    assert outcome.scores.get(primary) is None
    assert outcome.details["judge"][0]["raw_reply"]
