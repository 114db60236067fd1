"""Latency: the host-measured duration, lower is better, implausible durations unscored."""

import math

import pytest
from assay.artifacts.findings.common import problem_type
from assay.evaluators import CaseContext, Unscored, build_evaluator, evaluator_class, run_evaluator

from assay.models import ModelHost, TestCase, TestLab, TestLabRow


def latency(duration: float) -> float | None:
    return build_evaluator("latency").score(CaseContext.build(duration=duration))["latency_seconds"]


def test_latency_is_the_reported_duration() -> None:
    assert latency(2.3456789) == 2.345679
    assert latency(0.0) == 0.0


@pytest.mark.parametrize("duration", [-0.5, math.nan, 100_000.0])
def test_impossible_durations_are_unscored(duration: float) -> None:
    with pytest.raises(Unscored, match="test case case: the host reported a duration of"):
        latency(duration)


def test_lower_is_better_with_the_documented_default_and_seed_aggregate_name() -> None:
    metric = evaluator_class("latency").spec.primary_metric
    assert (metric.key, metric.higher_is_better, metric.threshold) == ("latency_seconds", False, 10.0)
    assert metric.aggregate_name == "agent/latency_seconds/average"
    assert metric.passes(10.0) and not metric.passes(10.01)
    assert build_evaluator("latency", metric_threshold=2.5).threshold("latency_seconds") == 2.5


def test_run_averages_measured_rows_only() -> None:
    rows = [
        TestLabRow(test_case=TestCase(key=key, prompt="q"), model_key="m", actual_output="a", actual_duration=duration)
        for key, duration in {"a": 1.5, "b": 12.5, "c": None}.items()
    ]
    lab = TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)
    result = run_evaluator(build_evaluator("latency"), lab)
    aggregate = result.aggregates["m"]["latency_seconds"]
    assert (aggregate.mean, aggregate.scored, aggregate.unscored, aggregate.passed) == (7.0, 2, 1, 1)
    assert result.rows[2].unscored_reason == "missing input: duration"


def test_problem_type_is_efficiency() -> None:
    assert problem_type(evaluator_class("latency").spec) == "efficiency"
