"""Agent sanity (seed 002's Agent Sanity Check): each recorded tool call and the final answer, checked without an
LLM; exact scores, the failed checks a reviewer is shown, and the cases left unscored."""

from pathlib import Path
from typing import Any

import pytest
from assay.artifacts.findings.problems import find_problems
from assay.evaluators import CaseContext, build_evaluator, evaluator_class, evaluator_ids, run_evaluator
from assay.evaluators.agent_sanity import json_lint
from assay.evaluators.runner import score_case

from assay.models import ModelHost, TestCase, TestLab, TestLabRow, ToolCall
from assay.models.evaluation import CaseScores

ROOT = Path(__file__).resolve().parents[2]


def outcome(calls: list[ToolCall], answer: str | None = "The rate is 3.25%.", **parameters: Any) -> CaseScores:
    case = CaseContext.build(test_case_key="c1", actual_output=answer, tool_calls=calls)
    return score_case(build_evaluator("agent_sanity", **parameters), case)


def failed(result: CaseScores) -> list[tuple[str, str | None, int | None]]:
    return [(entry["check"], entry.get("tool"), entry.get("call_index")) for entry in result.details["failed_checks"]]


def test_the_catalogue_lists_agent_sanity_as_the_manual_describes_it() -> None:
    assert "agent_sanity" in evaluator_ids()
    spec = evaluator_class("agent_sanity").full_spec()
    metric = spec.primary_metric
    assert (spec.display_name, spec.domain, spec.needs, spec.required_inputs) == (
        "Agent sanity",
        "generation",
        [],
        ["tool_calls"],
    )
    assert (metric.key, metric.higher_is_better, metric.range) == ("agent_sanity", True, (0.0, 1.0))
    assert metric.threshold == 0.75
    assert "unscored (missing input: tool_calls), even with an answer" in spec.description
    assert [parameter.default for parameter in spec.parameters if parameter.name == "max_identical_calls"] == [3]
    assert "`agent_sanity`" in (ROOT / "docs" / "explanation" / "evaluators.md").read_text()


def test_a_sane_run_passes_every_check() -> None:
    calls = [
        ToolCall(name="search", arguments={"query": "rates"}, output='[{"uri": "rates.md"}]', span_id="s1"),
        ToolCall(name="read_document", arguments={"uri": "rates.md"}, output="Easy Access: 3.25%", span_id="s2"),
        ToolCall(name="log", arguments={}),  # output not recorded: not checked
    ]
    result = outcome(calls)
    assert result.unscored_reason is None
    assert result.scores == {"agent_sanity": 1.0}
    # 2 x 4 checks on the calls with an output, 3 on the call without, 1 on the final answer
    assert result.details == {"tool_calls": 3, "checks": 12, "checks_passed": 12}


def test_each_failed_check_names_the_tool_its_call_index_and_span() -> None:
    calls = [
        ToolCall(name="search", arguments={"query": "rates"}, error="HTTP 503 from the search service", span_id="a"),
        ToolCall(name="search", arguments_text="query=rates", output="no results", span_id="b"),
        ToolCall(name="read_document", arguments={"uri": "rates.md"}, output="  \n", span_id="c"),
        ToolCall(name="rates_api", arguments={"product": "saver"}, output='{"rate": 3.25,', span_id="d"),
        ToolCall(name="rates_api", arguments={"product": "bond"}, output='{"rate": 4.1}', span_id="e"),
    ]
    result = outcome(calls)
    # checks: 3 (failed call: no output checks) + 4 + 4 + 4 + 4 + 1 (answer) = 20, of which 4 fail
    assert result.details["checks"] == 20 and result.details["checks_passed"] == 16
    assert result.scores == {"agent_sanity": 0.8}
    assert failed(result) == [
        ("tool_error", "search", 0),
        ("arguments_lint", "search", 1),
        ("empty_output", "read_document", 2),
        ("json_lint", "rates_api", 3),
    ]
    entries = result.details["failed_checks"]
    assert [entry["span_id"] for entry in entries] == ["a", "b", "c", "d"]
    assert entries[0]["reason"] == "the call failed: HTTP 503 from the search service"
    assert entries[1]["reason"] == "the arguments are not a JSON object: query=rates"
    assert entries[2]["reason"] == "the call returned an empty output"
    assert entries[3]["reason"].startswith("the output looks like JSON but does not parse: Expecting")


def test_json_lint_checks_only_outputs_that_look_like_json() -> None:
    assert json_lint("Plain text { with braces }") is None
    assert json_lint('  [1, 2, {"a": null}]\n') is None
    assert json_lint("[1, 2") is not None
    assert json_lint("{'single': 'quotes'}") is not None
    assert json_lint("[" * 100_000) == "the output looks like JSON but nests too deeply to parse"


def test_identical_calls_beyond_the_limit_fail_as_a_runaway_loop() -> None:
    same = [ToolCall(name="search", arguments={"q": "rates", "page": 1}, span_id=f"s{n}") for n in range(4)]
    reordered = ToolCall(name="search", arguments={"page": 1, "q": "rates"}, span_id="s4")  # key order is no change
    other = ToolCall(name="search", arguments={"q": "rates", "page": 2}, span_id="s5")
    result = outcome([*same, reordered, other])
    assert failed(result) == [("repetition", "search", 3), ("repetition", "search", 4)]
    assert result.details["failed_checks"][1]["reason"] == (
        "'search' called with identical arguments 5 times (at most 3)"
    )
    assert result.scores["agent_sanity"] == round(17 / 19, 6)  # 6 calls x 3 checks + the answer
    strict = outcome([*same, reordered, other], max_identical_calls=1)
    assert [index for _, _, index in failed(strict)] == [1, 2, 3, 4]
    lenient = outcome([*same, reordered, other], max_identical_calls=5)
    assert lenient.scores["agent_sanity"] == 1.0 and "failed_checks" not in lenient.details
    with pytest.raises(ValueError, match="max_identical_calls must be at least 1, not 0"):
        build_evaluator("agent_sanity", max_identical_calls=0)


@pytest.mark.parametrize("answer", [None, "", "  \n"])
def test_an_empty_final_answer_after_tool_calls_fails(answer: str | None) -> None:
    result = outcome([ToolCall(name="search", arguments={"q": "rates"}, output="3.25%")], answer=answer)
    assert result.unscored_reason is None
    assert result.scores == {"agent_sanity": 0.8}
    assert result.details["failed_checks"] == [
        {"check": "final_answer", "reason": "no final answer after 1 tool call(s)"}
    ]


def _row(key: str, model: str, calls: list[ToolCall], answer: str | None, error: str | None = None) -> TestLabRow:
    case = TestCase(key=key, prompt="What is the rate?")
    return TestLabRow(test_case=case, model_key=model, actual_output=answer, tool_calls=calls, error=error)


def test_runs_without_tool_calls_and_failed_hosts_are_unscored_never_zero() -> None:
    search = ToolCall(name="search", arguments={"q": "rates"}, output="3.25%")
    rows = [
        _row("plain", "m", [], "The rate is 3.25%."),
        _row("nothing", "m", [], None),
        _row("crashed", "m", [], None, error="timed out after 30 s"),
        _row("crashed-midway", "m", [search], None, error="timed out after 30 s"),
        _row("agent", "m", [search], "3.25%"),
    ]
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=rows)
    result = run_evaluator(build_evaluator("agent_sanity"), lab)
    reasons = {row.test_case_key: row.unscored_reason for row in result.rows}
    assert reasons == {
        "plain": "missing input: tool_calls",
        "nothing": "missing input: tool_calls",
        "crashed": "host error: timed out after 30 s",
        "crashed-midway": "host error: timed out after 30 s",
        "agent": None,
    }
    assert [row.scores.get("agent_sanity") for row in result.rows] == [None, None, None, None, 1.0]
    aggregate = result.aggregates["m"]["agent_sanity"]
    assert (aggregate.mean, aggregate.scored, aggregate.unscored) == (1.0, 1, 4)


def test_a_model_whose_mean_is_below_the_threshold_is_a_problem() -> None:
    good = [ToolCall(name="search", arguments={"q": "rates"}, output="3.25%", span_id="ok")]
    broken = [ToolCall(name="search", arguments_text="q=rates", error="bad arguments", span_id="x")]
    rows = [_row("c1", "steady", good, "3.25%"), _row("c1", "flaky", broken, "")]
    models = [ModelHost(key="steady", type="t"), ModelHost(key="flaky", type="t")]
    lab = TestLab(name="lab", models=models, rows=rows)
    result = run_evaluator(build_evaluator("agent_sanity"), lab)
    assert result.aggregates["flaky"]["agent_sanity"].mean == 0.25  # only the repetition check passes
    problems = [p for p in find_problems(lab, [result]) if p.attributes.get("evaluator") == "agent_sanity"]
    assert [problem.attributes["model_key"] for problem in problems] == ["flaky"]
