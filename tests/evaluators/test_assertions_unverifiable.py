"""An assertion that cannot be checked is left out on its own (issue 25, item 19): the other assertions of
the case are still checked, and a clear failure among them still fails the case."""

from assay.evaluators import CaseContext, build_evaluator, run_evaluator
from assay.evaluators.runner import score_case

from assay.models import Assertion, ModelHost, TestCase, TestLab, TestLabRow, ToolCall
from assay.models.evaluation import CaseScores

COST_UNREPORTED = "test case c1: assertions[1] (COST): the host reported no cost"


def _outcome(*assertions: Assertion, **fields: object) -> CaseScores:
    case = CaseContext.build(test_case_key="c1", assertions=list(assertions), **fields)
    return score_case(build_evaluator("assertions"), case)


def test_a_failed_tool_call_shows_as_a_failure_although_the_cost_is_unreported() -> None:
    result = _outcome(
        Assertion(type="TOOL_CALLED", targets=["freeze_card"]),
        Assertion(type="COST", threshold=0.01),
        tool_calls=[ToolCall(name="search", arguments={})],
    )
    assert result.unscored_reason is None
    assert result.scores["assertion_score"] == 0.0 and result.scores["assertions_failed"] == 1.0
    tool, cost = result.details["assertions"]
    assert tool["passed"] is False and "freeze_card" in tool["reason"]
    assert cost["passed"] is None and cost["reason"] == COST_UNREPORTED
    assert result.details["unverified"] == [COST_UNREPORTED]


def test_the_checked_assertions_are_scored_without_the_unverifiable_one() -> None:
    result = _outcome(
        Assertion(type="CONTAINS_ANY", targets=["freeze"]),
        Assertion(type="COST", threshold=0.01),
        Assertion(type="TOOL_CALLED", targets=["freeze_card"], weight=0.5),
        actual_output="You can freeze the card in the app.",
        tool_calls=[ToolCall(name="search", arguments={})],
    )
    # Weighted over the two checked assertions: 1 of 1.5 holds.
    assert result.scores["assertion_score"] == round(100.0 / 1.5, 6)
    assert result.scores["assertions_passed"] == 0.5


def test_when_every_checked_assertion_holds_the_unverifiable_one_decides_so_the_case_is_unscored() -> None:
    result = _outcome(
        Assertion(type="TOOL_CALLED", targets=["freeze_card"]),
        Assertion(type="COST", threshold=0.01),
        tool_calls=[ToolCall(name="freeze_card", arguments={})],
    )
    assert result.unscored_reason == COST_UNREPORTED
    assert all(value is None for value in result.scores.values())
    assert [entry["passed"] for entry in result.details["assertions"]] == [True, None]


def test_a_run_counts_the_clear_failure_as_a_failing_case() -> None:
    assertions = [Assertion(type="TOOL_CALLED", targets=["freeze_card"]), Assertion(type="COST", threshold=0.01)]
    row = TestLabRow(
        test_case=TestCase(key="freeze", prompt="Freeze my card", assertions=assertions),
        model_key="m",
        actual_output="Done.",
        tool_calls=[ToolCall(name="search", arguments={})],
    )
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="testlab")], rows=[row])
    aggregate = run_evaluator(build_evaluator("assertions"), lab).aggregates["m"]["assertion_score"]
    assert (aggregate.scored, aggregate.unscored, aggregate.passed, aggregate.mean) == (1, 0, 0, 0.0)
