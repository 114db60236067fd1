"""The evaluator contract: a complete spec that round-trips, missing inputs unscored with the reason, golden
cases on the right side of the threshold (or unavailable, said for every case), values in range and repeatable.

Each rule takes the evaluator id and the ``Services`` to score with (embeddings; a judge for judged ones)."""

import math
from collections.abc import Iterable
from unittest import SkipTest

from assay.evaluators import CaseContext, Services, build_evaluator, evaluator_class, evaluator_ids, run_evaluator
from assay.evaluators.runner import score_case
from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import EvaluatorSpec
from assay.testing.conformance import Check, checks_for


def check_spec_is_complete_and_round_trips(evaluator_id: str, services: Services) -> None:
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


def check_missing_inputs_leave_the_case_unscored_with_the_reason(evaluator_id: str, services: Services) -> None:
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


def check_golden_cases_land_on_the_right_side_of_the_threshold(evaluator_id: str, services: Services) -> None:
    cls = evaluator_class(evaluator_id)
    assert set(cls.golden) == {"good", "bad"}
    evaluator = build_evaluator(evaluator_id, services)
    reason = evaluator.unavailable_reason()
    if reason is not None:
        # Without weights the evaluator must say so for every case instead of inventing a score.
        evaluator_result = build_evaluator(evaluator_id, services)
        categories = cls.golden["good"].get("categories", [])  # a task the evaluator declares (summarization)
        case = TestCase(key="g", prompt="q", categories=categories)
        row = TestLabRow(test_case=case, model_key="m", actual_output="a")
        result = run_evaluator(evaluator_result, TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=[row]))
        assert result.rows[0].unscored_reason in (reason,) or result.rows[0].unscored_reason.startswith("missing")
        raise SkipTest(f"{evaluator_id} unavailable here ({reason}); its own tests score it with a tiny model")
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


def check_values_stay_in_range_and_repeat_exactly(evaluator_id: str, services: Services) -> None:
    cls = evaluator_class(evaluator_id)
    if build_evaluator(evaluator_id, services).unavailable_reason() is not None:
        raise SkipTest("unavailable here")
    for fields in cls.golden.values():
        first = _score(evaluator_id, services, fields)
        second = _score(evaluator_id, services, fields)
        assert first == second
        for key, value in first.items():
            if value is None:
                continue
            low, high = cls.spec.metric(key).range
            assert math.isfinite(value) and low <= value <= high, f"{key}={value} outside {low}..{high}"


RULES = (
    check_spec_is_complete_and_round_trips,
    check_missing_inputs_leave_the_case_unscored_with_the_reason,
    check_golden_cases_land_on_the_right_side_of_the_threshold,
    check_values_stay_in_range_and_repeat_exactly,
)


def evaluator_checks(ids: Iterable[str] | None = None) -> list[Check]:
    """Every rule for the evaluators named (default: every registered one); call each with ``Services``."""
    return checks_for(evaluator_ids() if ids is None else ids, RULES)
