"""Token count: host-reported counts, partial reports, the lower-is-better threshold and seed aggregate names."""

import pytest
from assay.artifacts.findings.common import problem_type
from assay.evaluators import CaseContext, Unscored, build_evaluator, evaluator_class, run_evaluator

from assay.models import ModelHost, TestCase, TestLab, TestLabRow


def counts(**fields: object) -> dict[str, float | None]:
    return build_evaluator("token_count").score(CaseContext.build(**fields))


def test_total_is_input_plus_output() -> None:
    assert counts(input_tokens=1200, output_tokens=345) == {
        "total_token_count": 1545.0,
        "input_token_count": 1200.0,
        "output_token_count": 345.0,
    }
    assert counts(input_tokens=0, output_tokens=0)["total_token_count"] == 0.0


def test_a_one_sided_report_keeps_the_known_count_and_leaves_the_total_unscored() -> None:
    with pytest.raises(Unscored, match="test case case: the host reported no input_token_count") as raised:
        counts(output_tokens=80)
    assert raised.value.scores == {"output_token_count": 80.0}


def test_impossible_counts_are_unscored() -> None:
    with pytest.raises(Unscored, match="negative input_token_count"):
        counts(input_tokens=-5, output_tokens=3)
    with pytest.raises(Unscored, match="beyond any real run"):
        counts(input_tokens=900_000_000, output_tokens=200_000_000)


def test_lower_is_better_against_the_default_and_an_overridden_budget() -> None:
    spec = evaluator_class("token_count").spec
    primary = spec.primary_metric
    assert (primary.key, primary.higher_is_better, primary.threshold) == ("total_token_count", False, 4000.0)
    assert primary.passes(4000.0) and not primary.passes(4001.0)
    assert build_evaluator("token_count", metric_threshold=500).threshold("total_token_count") == 500.0
    assert {metric.key: metric.aggregate_name for metric in spec.metrics} == {
        "total_token_count": "agent/total_token_count/average",
        "input_token_count": "agent/input_token_count/average",
        "output_token_count": "agent/output_token_count/average",
    }


def test_run_averages_reported_counts_and_counts_unreported_rows_as_unscored() -> None:
    def row(key: str, tokens_in: int | None, tokens_out: int | None) -> TestLabRow:
        return TestLabRow(
            test_case=TestCase(key=key, prompt="q"),
            model_key="m",
            actual_output="a",
            input_tokens=tokens_in,
            output_tokens=tokens_out,
        )

    lab = TestLab(
        name="l",
        models=[ModelHost(key="m", type="t")],
        rows=[row("a", 1000, 200), row("b", 3000, 2000), row("c", None, 50), row("d", None, None)],
    )
    result = run_evaluator(build_evaluator("token_count"), lab)
    total = result.aggregates["m"]["total_token_count"]
    assert (total.mean, total.scored, total.unscored, total.passed) == (3100.0, 2, 2, 1)
    output = result.aggregates["m"]["output_token_count"]
    assert (output.mean, output.scored) == (750.0, 3)
    reasons = {row.test_case_key: row.unscored_reason for row in result.rows}
    assert reasons["d"] == "missing input: tokens"
    assert reasons["c"] is not None and "input_token_count" in reasons["c"]


def test_problem_type_is_cost() -> None:
    assert problem_type(evaluator_class("token_count").spec) == "cost"
