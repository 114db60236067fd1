"""One conformance suite over every registered evaluator (after scikit-learn's estimator checks)."""

import math
from collections.abc import Iterator

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator, evaluator_class, evaluator_ids
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine
from assay.judges.client import open_judge
from assay.models.evaluation import EvaluatorSpec
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import endpoint_for

IDS = evaluator_ids()


JUDGED = [evaluator_id for evaluator_id in IDS if "llm" in evaluator_class(evaluator_id).spec.needs]


@pytest.fixture(scope="module")
def judge_server() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer()) as running:
        yield running


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine, judge_server: JudgeServer, tmp_path_factory: pytest.TempPathFactory) -> Services:
    """Embeddings, and the local rule-based judge for the judged evaluators (no cache: each call is real)."""
    endpoint = endpoint_for(judge_server)
    return Services(embedder_factory=lambda: engine, judge_factory=lambda: open_judge(endpoint, None))


@pytest.mark.parametrize("evaluator_id", IDS)
def test_spec_is_complete_and_round_trips(evaluator_id: str) -> None:
    cls = evaluator_class(evaluator_id)
    spec = cls.full_spec()
    assert EvaluatorSpec.model_validate_json(spec.model_dump_json()) == spec
    assert spec.display_name and spec.description and spec.compliance and spec.required_inputs
    assert sum(metric.is_primary for metric in spec.metrics) == 1
    keys = [metric.key for metric in spec.metrics]
    assert len(keys) == len(set(keys))
    for metric in spec.metrics:
        low, high = metric.range
        assert low < high and metric.display_name and metric.description
        assert metric.threshold is None or low <= metric.threshold <= high
    assert all(parameter.description for parameter in spec.parameters)
    evaluator = build_evaluator(evaluator_id)
    assert build_evaluator(evaluator_id, **evaluator.parameters()).parameters() == evaluator.parameters()


@pytest.mark.parametrize("evaluator_id", IDS)
def test_missing_inputs_leave_the_case_unscored_with_the_reason(evaluator_id: str, services: Services) -> None:
    evaluator = build_evaluator(evaluator_id, services)
    outcome = score_case(evaluator, CaseContext.build(actual_output=None))
    assert outcome.unscored_reason is not None and outcome.unscored_reason.startswith("missing input: ")
    for name in evaluator.spec.required_inputs:
        if name not in ("duration", "cost", "tokens") or name in outcome.unscored_reason:
            assert name in outcome.unscored_reason
    assert all(value is None for value in outcome.scores.values())


def _score(evaluator_id: str, services: Services, fields: dict) -> dict[str, float | None]:
    evaluator = build_evaluator(evaluator_id, services)
    case = CaseContext.build(**fields)
    reason = evaluator.unavailable_reason()
    if reason is None:
        evaluator.prepare([case])
    outcome = score_case(evaluator, case)
    if reason is not None:
        return {"__unavailable__": reason}  # type: ignore[dict-item]
    assert outcome.unscored_reason is None, outcome.unscored_reason
    return outcome.scores


@pytest.mark.parametrize("evaluator_id", IDS)
def test_golden_cases_land_on_the_right_side_of_the_threshold(evaluator_id: str, services: Services) -> None:
    cls = evaluator_class(evaluator_id)
    assert set(cls.golden) == {"good", "bad"}
    evaluator = build_evaluator(evaluator_id, services)
    reason = evaluator.unavailable_reason()
    if reason is not None:
        # Without weights the evaluator must say so for every case instead of inventing a score.
        evaluator_result = build_evaluator(evaluator_id, services)
        from assay.evaluators import run_evaluator

        from assay.models import ModelHost, TestCase, TestLab, TestLabRow

        categories = cls.golden["good"].get("categories", [])  # a task the evaluator declares (summarization)
        case = TestCase(key="g", prompt="q", categories=categories)
        row = TestLabRow(test_case=case, model_key="m", actual_output="a")
        result = run_evaluator(evaluator_result, TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=[row]))
        assert result.rows[0].unscored_reason in (reason,) or result.rows[0].unscored_reason.startswith("missing")
        pytest.skip(f"{evaluator_id} unavailable here ({reason}); its own tests score it with a tiny model")
    primary = cls.spec.primary_metric
    good = _score(evaluator_id, services, cls.golden["good"])[primary.key]
    bad = _score(evaluator_id, services, cls.golden["bad"])[primary.key]
    assert good is not None and bad is not None
    threshold = evaluator.threshold(primary.key)
    if threshold is not None and math.isinf(threshold):
        # The manual's default threshold reports no problem (GPTScore's +inf): the golden cases still rank.
        assert (good < bad) != primary.higher_is_better, f"good case scored {good}, bad case {bad}"
        return
    assert primary.passes(good, threshold), f"good case scored {good}"
    assert not primary.passes(bad, threshold), f"bad case scored {bad}"


@pytest.mark.parametrize("evaluator_id", IDS)
def test_values_stay_in_range_and_repeat_exactly(evaluator_id: str, services: Services) -> None:
    cls = evaluator_class(evaluator_id)
    if build_evaluator(evaluator_id, services).unavailable_reason() is not None:
        pytest.skip("unavailable here")
    for fields in cls.golden.values():
        first = _score(evaluator_id, services, fields)
        second = _score(evaluator_id, services, fields)
        assert first == second
        for key, value in first.items():
            if value is None:
                continue
            low, high = cls.spec.metric(key).range
            assert math.isfinite(value) and low <= value <= high, f"{key}={value} outside {low}..{high}"
