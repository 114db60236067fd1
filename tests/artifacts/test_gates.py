"""Release gates: parsing, pass rates with unscored cases, thresholds in force, not evaluable, --fail-on."""

import pytest
from assay.artifacts.gates import check_gates, parse_gate, parse_gates
from assay.artifacts.report.run_documents import RunDocuments

from tests.support.fake_runs import fake_run, problem

# 3 scored (2 pass the 0.75 threshold), 1 unscored: pass rate 2/3, not 2/4, and the unscored one is counted
RUN = fake_run(
    "r1",
    {"rag": {"a": 0.9, "b": 0.8, "c": 0.2, "d": None}, "other": {"a": None, "b": None}},
    problems=[problem("medium"), problem("low")],
)


def test_expressions_parse_and_bad_ones_name_themselves() -> None:
    gate = parse_gate(" groundedness.groundedness >= 80% ")
    assert (gate.target, gate.comparison, gate.value) == ("groundedness.groundedness", ">=", 0.8)
    assert [g.comparison for g in parse_gates(["a<0.1", "a>1", "a<=2e-1"])] == ["<", ">", "<="]
    for bad in ("groundedness=>0.8", "groundedness>=", ">=0.8", "ground edness>=0.8", "x>=0.8; rm"):
        with pytest.raises(ValueError, match="gate '"):
            parse_gate(bad)


def test_pass_rate_counts_only_scored_cases_and_breaches_when_nothing_is_scored() -> None:
    report = check_gates(RUN, parse_gates(["groundedness>=0.6", "groundedness>0.7"]))
    rag = [r for r in report.gates if r.model_key == "rag"]
    assert [(r.passed, round(r.value, 4), r.scored, r.unscored, r.passing_cases) for r in rag] == [
        (True, 0.6667, 3, 1, 2), (False, 0.6667, 3, 1, 2)]  # fmt: skip
    assert "0.75" in rag[0].reason and "groundedness default" in rag[0].reason and "1 unscored" in rag[0].reason
    other = next(r for r in report.gates if r.model_key == "other")
    assert not other.passed and other.value is None and other.reason.startswith("not evaluable")
    assert report.breached


def test_metric_names_resolve_or_are_not_evaluable() -> None:
    report = check_gates(RUN, parse_gates(["groundedness.nope>=0.5", "groundednes>=0.5", "groundedness>=0.1"]))
    reasons = [r.reason for r in report.gates]
    assert "has no metric 'nope'" in reasons[0]
    assert "did you mean groundedness" in reasons[1]
    assert [r.passed for r in report.gates[2:]] == [True, False]  # the second model has no scored case


def test_calibrated_threshold_of_an_mrm_run_is_used_and_named() -> None:
    evaluation = fake_run("m1", {"rag": {"a": 0.9, "b": 0.8, "c": 0.2}})
    book = {"entries": [{"evaluator_id": "groundedness", "metric": "groundedness", "threshold": 0.85,
                         "source": "calibrated", "set_by": "calibrated on 40 labels by ana"}]}  # fmt: skip
    documents = {f"automated-evaluation/{name}": doc for name, doc in evaluation.documents.items()}
    documents |= {"workflow_summary.json": {"run_id": "m1"}, "calibration/thresholds.json": book}
    result = check_gates(RunDocuments(source="mrm", documents=documents), parse_gates(["groundedness>=0.5"])).gates[0]
    assert (result.case_threshold, result.passing_cases, result.passed) == (0.85, 1, False)
    assert "calibrated on 40 labels by ana" in result.case_threshold_source


def test_metric_without_threshold_is_gated_on_its_mean() -> None:
    run = fake_run("r2", {"rag": {"a": 1.0}}, evaluator="latency", metric="latency_seconds", threshold=None)
    run.documents["summary.json"]["metrics"]["rag"]["latency"]["latency_seconds"].update(mean=2.5, scored=4)
    below, above = check_gates(run, parse_gates(["latency<=3", "latency<2"])).gates
    assert below.statistic == "mean" and below.passed and not above.passed and "mean 2.5" in above.reason


@pytest.mark.parametrize(("level", "breached", "matching"), [("high", False, 0), ("medium", True, 1), ("any", True, 2)])
def test_fail_on_counts_problems_at_or_above_the_level(level: str, breached: bool, matching: int) -> None:
    report = check_gates(RUN, [], level)  # type: ignore[arg-type]
    assert report.breached is breached and report.severity is not None
    assert report.severity.matching == matching and report.severity.counted == {"high": 0, "medium": 1, "low": 1}
    if breached:  # the message names the problems that breach, most severe first, not only their count
        assert f"{matching} breach (medium: " in report.severity.reason, report.severity.reason


def test_fail_on_without_problems_file_breaches() -> None:
    run = fake_run("r3", {"rag": {"a": 1.0}})
    del run.documents["problems/problems_and_actions.json"]
    report = check_gates(run, [], "high")
    assert report.breached and report.severity is not None and "not evaluable" in report.severity.reason
