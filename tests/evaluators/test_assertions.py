"""The assertions evaluator (seed 004): every type, the modifiers, templates, JSON, tools, turns and weights."""

from pathlib import Path
from typing import Any

import pytest
from assay.evaluators import CaseContext, build_evaluator, run_evaluator
from assay.evaluators._assertion_checks import describe_text
from assay.evaluators.runner import score_case

from assay.models import Assertion, ConversationTurn, ModelHost, TestCase, TestLab, TestLabRow, ToolCall
from assay.models.evaluation import CaseScores


def outcome(*assertions: Assertion, **fields: Any) -> CaseScores:
    fields.setdefault("test_case_key", "c1")
    return score_case(build_evaluator("assertions"), CaseContext.build(assertions=list(assertions), **fields))


def case_score(*assertions: Assertion, **fields: Any) -> float:
    result = outcome(*assertions, **fields)
    assert result.unscored_reason is None, result.unscored_reason
    value = result.scores["assertion_score"]
    assert value is not None
    return value


def unscored_reason(*assertions: Assertion, **fields: Any) -> str:
    result = outcome(*assertions, **fields)
    assert result.unscored_reason is not None, result.scores
    assert all(value is None for value in result.scores.values())
    return result.unscored_reason


def check(kind: str, *targets: str, **options: Any) -> Assertion:
    return Assertion(type=kind, targets=list(targets), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "targets", "answer", "holds", "holds_ignoring_case"),
    [
        ("EXACT_MATCH", ["Paris"], "  Paris\n", True, True),
        ("EXACT_MATCH", ["Paris"], "paris", False, True),
        ("EXACT_MATCH", ["Paris"], "Paris, France", False, False),
        ("CONTAINS_ALL", ["fee", "30 days"], "A FEE is due within 30 days.", False, True),
        ("CONTAINS_ALL", ["fee", "30 days"], "A fee is due within 30 days.", True, True),
        ("CONTAINS_ALL", ["fee", "60 days"], "A fee is due within 30 days.", False, False),
        ("CONTAINS_ANY", ["refund", "Fee"], "a fee applies", False, True),
        ("CONTAINS_ANY", ["refund", "fee"], "a fee applies", True, True),
        ("CONTAINS_ANY", ["refund", "credit"], "a fee applies", False, False),
        ("STARTS_WITH", ["Yes"], "\n Yes, you can.", True, True),
        ("STARTS_WITH", ["Yes"], "yes, you can.", False, True),
        ("STARTS_WITH", ["Yes"], "No. Yes, you can.", False, False),
    ],
)
def test_text_assertions_with_not_and_ignore_case(
    kind: str, targets: list[str], answer: str, holds: bool, holds_ignoring_case: bool
) -> None:
    for negate in (False, True):
        for ignore_case, expected in ((False, holds), (True, holds_ignoring_case)):
            assertion = check(kind, *targets, negate=negate, ignore_case=ignore_case)
            score = case_score(assertion, actual_output=answer)
            assert score == (100.0 if expected != negate else 0.0), (negate, ignore_case)


def test_single_value_types_refuse_several_targets() -> None:
    reason = unscored_reason(check("EXACT_MATCH", "a", "b"), actual_output="a")
    assert reason == "test case c1: assertions[0] (EXACT_MATCH): takes one target, got 2"


def test_templates_are_filled_from_the_case_variables() -> None:
    variables = {"city": "Paris", "fee": "£25"}
    assertion = check("CONTAINS_ALL", "{{ city }}", "fee of {{fee}}")
    assert case_score(assertion, actual_output="In Paris the fee of £25 applies.", variables=variables) == 100.0
    assert case_score(assertion, actual_output="In Lyon the fee of £25 applies.", variables=variables) == 0.0
    literal = check("CONTAINS_ALL", "{% raw %}", "{#x}")
    assert case_score(literal, actual_output="keeps {% raw %} and {#x} as text", variables=variables) == 100.0


def test_an_undefined_variable_leaves_the_case_unscored_naming_case_and_variable() -> None:
    reason = unscored_reason(
        check("EXACT_MATCH", "Hi Ann"),  # holds, so the unchecked assertion decides the case (issue 25, item 19)
        check("STARTS_WITH", "{{greeting}} {{name}}"),
        actual_output="Hi Ann",
        variables={"name": "Ann"},
        test_case_key="greet-7",
    )
    assert reason.startswith("test case greet-7: assertions[1] (STARTS_WITH): undefined variable 'greeting'")
    assert "(case variables: name)" in reason


def test_invalid_json_fails_every_assertion_even_negated_ones() -> None:
    assertions = [
        check("CONTAINS_ANY", "error", negate=True),
        Assertion(type="LATENCY", threshold=5.0),
        check("EXACT_MATCH", "1", json_path="$.a"),
    ]
    fields = {"response_format": "json", "duration": 1.0}
    broken = outcome(*assertions, actual_output='{"a": 1', **fields)
    assert broken.scores == {
        "assertion_score": 0.0,
        "assertions_passed": 0.0,
        "assertions_failed": 1.0,
        "weighted_assertion_score": 0.0,
    }
    assert case_score(*assertions, actual_output='```json\n{"a": 1}\n```', **fields) == 100.0
    assert case_score(*assertions, actual_output='{"a": 1}', **fields) == 100.0


def test_json_path_selects_nested_and_listed_values() -> None:
    answer = (
        '{"order": {"customer": {"name": "Ann Lee"}, "total": 3.25, "paid": true, "note": null,'
        ' "items": [{"sku": "A1", "qty": 2}, {"sku": "B7", "qty": 1}]}}'
    )

    def scores(assertion: Assertion) -> float:
        return case_score(assertion, actual_output=answer, response_format="json")

    assert scores(check("EXACT_MATCH", "Ann Lee", json_path="$.order.customer.name")) == 100.0
    assert scores(check("STARTS_WITH", "ann", ignore_case=True, json_path="$.order.customer.name")) == 100.0
    assert scores(check("EXACT_MATCH", "3.250", json_path="$.order.total")) == 100.0
    assert scores(check("EXACT_MATCH", "3.2", json_path="$.order.total")) == 0.0
    assert scores(check("EXACT_MATCH", "true", json_path="$.order.paid")) == 100.0
    assert scores(check("EXACT_MATCH", "True", json_path="$.order.paid")) == 0.0
    assert scores(check("EXACT_MATCH", "True", ignore_case=True, json_path="$.order.paid")) == 100.0
    assert scores(check("EXACT_MATCH", "1", json_path="$.order.paid")) == 0.0
    assert scores(check("EXACT_MATCH", "null", json_path="$.order.note")) == 100.0
    assert scores(check("EXACT_MATCH", "B7", json_path="$.order.items[1].sku")) == 100.0
    assert scores(check("EXACT_MATCH", "B7", json_path="$.order.items[0].sku")) == 0.0
    assert scores(check("EXACT_MATCH", "B7", json_path="$.order.items[*].sku")) == 100.0
    assert scores(check("CONTAINS_ALL", "A1", "B7", json_path="$.order.items[*].sku")) == 100.0
    assert scores(check("CONTAINS_ALL", "A1", "C9", json_path="$.order.items[*].sku")) == 0.0
    assert scores(check("CONTAINS_ANY", "C9", "B7", json_path="$.order.items[*].sku")) == 100.0
    assert scores(check("EXACT_MATCH", "B7", json_path="$.order.items[?(@.qty < 2)].sku")) == 100.0
    assert scores(check("EXACT_MATCH", '{"sku": "A1", "qty": 2}', json_path="$.order.items[0]")) == 100.0
    assert scores(check("EXACT_MATCH", "x", json_path="$.order.missing")) == 0.0
    assert scores(check("EXACT_MATCH", "x", negate=True, json_path="$.order.missing")) == 100.0


def test_json_path_errors_are_unscored_with_the_reason() -> None:
    bad_path = unscored_reason(check("EXACT_MATCH", "x", json_path="$.a[["), actual_output="{}", response_format="json")
    assert bad_path.startswith("test case c1: assertions[0] (EXACT_MATCH): json_path '$.a[[' does not parse")
    on_text = unscored_reason(check("EXACT_MATCH", "x", json_path="$.a"), actual_output='{"a": "x"}')
    assert (
        on_text == "test case c1: assertions[0] (EXACT_MATCH): json_path '$.a' needs response_format 'json', not 'text'"
    )


def test_tool_assertions_match_name_and_an_argument_subset() -> None:
    calls = [
        ToolCall(name="search", arguments={"query": "fees"}),
        ToolCall(name="transfer", arguments={"amount": 250, "to": {"iban": "GB00X", "name": "Ann"}, "tags": ["a"]}),
    ]
    variables = {"amount": "250", "iban": "GB00X"}

    def scores(assertion: Assertion) -> float:
        return case_score(assertion, tool_calls=calls, variables=variables)

    assert scores(check("TOOL_CALLED", "transfer")) == 100.0
    assert scores(check("TOOL_CALLED", "Transfer")) == 0.0
    assert scores(check("TOOL_CALLED", "Transfer", ignore_case=True)) == 100.0
    assert scores(check("TOOL_CALLED", "refund")) == 0.0
    assert scores(check("TOOL_CALLED", "refund", negate=True)) == 100.0

    def called_with(arguments: dict[str, Any], **options: Any) -> float:
        return scores(Assertion(type="TOOL_CALLED_WITH", targets=["transfer"], arguments=arguments, **options))

    assert called_with({}) == 100.0
    assert called_with({"amount": "{{amount}}"}) == 100.0
    assert called_with({"amount": 250.0, "to": {"iban": "{{iban}}"}}) == 100.0
    assert called_with({"tags": ["a"]}) == 100.0
    assert called_with({"tags": ["a", "b"]}) == 0.0
    assert called_with({"amount": 25}) == 0.0
    assert called_with({"to": {"name": "ann"}}) == 0.0
    assert called_with({"to": {"name": "ann"}}, ignore_case=True) == 100.0
    assert called_with({"currency": "GBP"}) == 0.0
    assert called_with({"query": "fees"}) == 0.0  # a different call's arguments do not count
    assert called_with({"amount": 25}, negate=True) == 100.0
    assert case_score(check("TOOL_CALLED", "search")) == 0.0  # no calls at all
    reason = unscored_reason(
        Assertion(type="TOOL_CALLED_WITH", targets=["transfer"], arguments={"to": {"iban": "{{account}}"}}),
        tool_calls=calls,
        variables=variables,
    )
    assert "undefined variable 'account'" in reason


AGENT_RUN = [
    ToolCall(name="search", arguments={"q": "card lost"}),
    ToolCall(name="lookup_account", arguments={"id": "A1"}),
    ToolCall(name="search", arguments={"q": "freeze"}),
    ToolCall(name="freeze_card", arguments={"card": "1234"}),
]


@pytest.mark.parametrize(
    ("targets", "holds"),
    [
        (["lookup_account", "freeze_card"], True),
        (["search", "freeze_card"], True),  # other calls in between are allowed
        (["search", "search", "freeze_card"], True),  # a name listed twice needs two calls
        (["lookup_account", "search"], True),  # the second search comes after the lookup
        (["search", "search", "search"], False),
        (["freeze_card", "lookup_account"], False),  # wrong order
        (["lookup_account", "notify_customer"], False),  # a tool never called
        (["{{verify}}", "freeze_card"], True),  # templates are filled
    ],
)
def test_tool_called_in_order_holds_for_the_names_as_a_subsequence_of_the_calls(
    targets: list[str], holds: bool
) -> None:
    variables = {"verify": "lookup_account"}
    in_order = check("TOOL_CALLED_IN_ORDER", *targets)
    negated = check("TOOL_CALLED_IN_ORDER", *targets, negate=True)
    assert case_score(in_order, tool_calls=AGENT_RUN, variables=variables) == (100.0 if holds else 0.0)
    assert case_score(negated, tool_calls=AGENT_RUN, variables=variables) == (0.0 if holds else 100.0)


def test_tool_called_in_order_reasons_name_the_tool_that_broke_the_order() -> None:
    reasons = [
        entry.get("reason")
        for entry in listed(
            check("TOOL_CALLED_IN_ORDER", "freeze_card", "lookup_account"),
            check("TOOL_CALLED_IN_ORDER", "lookup_account", "notify_customer"),
            check("TOOL_CALLED_IN_ORDER", "lookup_account", "freeze_card", negate=True),
            check("TOOL_CALLED_IN_ORDER", "Lookup_Account", "FREEZE_CARD", ignore_case=True),
            check("TOOL_CALLED_IN_ORDER", "Lookup_Account", "freeze_card"),
            tool_calls=AGENT_RUN,
        )
    ]
    calls = "(calls: 'search', 'lookup_account', 'search', 'freeze_card')"
    assert reasons == [
        f"no call to 'lookup_account' after 'freeze_card' {calls}",
        f"no call to 'notify_customer' {calls}",
        "negated, but 'lookup_account', 'freeze_card' called in that order",
        None,
        f"no call to 'Lookup_Account' {calls}",
    ]
    assert case_score(check("TOOL_CALLED_IN_ORDER", "search")) == 0.0  # no calls at all
    with pytest.raises(ValueError, match="TOOL_CALLED_IN_ORDER needs at least one value in 'targets'"):
        Assertion(type="TOOL_CALLED_IN_ORDER")
    misplaced = unscored_reason(check("TOOL_CALLED_IN_ORDER", "search", json_path="$.a"), response_format="json",
                                actual_output="{}", tool_calls=AGENT_RUN)  # fmt: skip
    assert misplaced.endswith("json_path applies only to text assertions")


def test_the_assertions_description_lists_the_order_extension() -> None:
    description = build_evaluator("assertions").spec.description
    assert "TOOL_CALLED_IN_ORDER, an Assay extension" in description
    guide = (Path(__file__).resolve().parents[2] / "docs" / "explanation" / "evaluators.md").read_text()
    assert "`TOOL_CALLED_IN_ORDER` (an Assay extension)" in guide


@pytest.mark.parametrize(("kind", "field"), [("LATENCY", "duration"), ("COST", "cost")])
def test_latency_and_cost_against_thresholds(kind: str, field: str) -> None:
    limit = Assertion(type=kind, threshold=2.5)  # type: ignore[arg-type]
    assert case_score(limit, **{field: 2.5}) == 100.0
    assert case_score(limit, **{field: 2.6}) == 0.0
    assert case_score(Assertion(type=kind, threshold=2.5, negate=True), **{field: 2.6}) == 100.0  # type: ignore[arg-type]
    reason = unscored_reason(limit, actual_output="an answer")
    assert reason == f"test case c1: assertions[0] ({kind}): the host reported no {field}"


def test_a_case_needs_an_answer_only_for_text_assertions_or_json_validation() -> None:
    assert case_score(Assertion(type="LATENCY", threshold=1.0), duration=0.5) == 100.0
    reason = unscored_reason(check("CONTAINS_ANY", "x"), duration=0.5, actual_output="  ")
    assert reason == "test case c1: missing input: actual_output (no answer to check)"
    assert unscored_reason(Assertion(type="LATENCY", threshold=1.0), duration=0.5, response_format="json")


def test_turn_selects_an_assistant_turn_of_the_conversation() -> None:
    turns = [
        ConversationTurn(role="user", content="Hi"),
        ConversationTurn(role="assistant", content="Hello! How can I help?"),
        ConversationTurn(role="user", content="Status as JSON"),
        ConversationTurn(role="assistant", content='{"status": "open"}'),
    ]
    fields = {"turns": turns, "actual_output": "Goodbye"}
    assert case_score(check("STARTS_WITH", "Hello", turn=0), **fields) == 100.0
    assert case_score(check("STARTS_WITH", "Hello", turn=-2), **fields) == 100.0
    assert case_score(check("STARTS_WITH", "Hello", turn=1), **fields) == 0.0
    assert case_score(check("EXACT_MATCH", "Goodbye"), **fields) == 100.0
    json_turn = check("EXACT_MATCH", "open", turn=-1, json_path="$.status")
    assert (
        case_score(json_turn, **fields | {"actual_output": '{"status": "closed"}', "response_format": "json"}) == 100.0
    )
    not_json = check("EXACT_MATCH", "x", turn=0, json_path="$.status", negate=True)
    assert case_score(not_json, **fields | {"actual_output": "{}", "response_format": "json"}) == 0.0
    for turn in (2, -3):
        reason = unscored_reason(check("STARTS_WITH", "Hello", turn=turn), **fields)
        assert reason.endswith(f"turn {turn} is out of range: the conversation has 2 assistant turn(s)")
    assert case_score(check("STARTS_WITH", "Hello", turn=0), turns=turns) == 100.0  # no final answer needed
    reason = unscored_reason(Assertion(type="COST", threshold=1.0, turn=0), cost=0.1)
    assert reason == "test case c1: assertions[0] (COST): turn applies only to text assertions"


def test_the_score_is_the_weighted_average_of_the_outcomes() -> None:
    result = outcome(
        check("CONTAINS_ANY", "fee", weight=0.5),
        check("CONTAINS_ANY", "refund", weight=0.3),
        check("STARTS_WITH", "A", weight=0.2),
        check("EXACT_MATCH", "nope", weight=0.0),
        actual_output="A fee applies.",
    )
    assert result.scores == {
        "assertion_score": 70.0,
        "assertions_passed": 0.5,
        "assertions_failed": 0.5,
        "weighted_assertion_score": 70.0,
    }
    assert (
        case_score(
            check("CONTAINS_ANY", "fee", weight=0.1), check("CONTAINS_ANY", "x", weight=0.3), actual_output="fee"
        )
        == 25.0
    )
    all_pass = [check("CONTAINS_ANY", "fee", weight=w) for w in (0.1, 0.2, 0.3, 0.7)]
    assert case_score(*all_pass, actual_output="fee") == 100.0
    reason = unscored_reason(check("CONTAINS_ANY", "fee", weight=0.0), actual_output="fee")
    assert reason == "test case c1: every assertion has weight 0, so there is no score"


def test_a_case_without_assertions_is_unscored() -> None:
    assert unscored_reason(actual_output="anything") == "missing input: assertions"


def test_pass_mark_is_every_weighted_assertion_and_can_be_lowered() -> None:
    evaluator = build_evaluator("assertions")
    metric = evaluator.spec.primary_metric
    assert evaluator.threshold("assertion_score") == 100.0
    assert not metric.passes(99.999999, evaluator.threshold("assertion_score"))
    assert build_evaluator("assertions", metric_threshold=70.0).threshold("assertion_score") == 70.0


def _row(key: str, answer: str | None, weight: float, assertions: list[Assertion], model: str = "m") -> TestLabRow:
    case = TestCase(key=key, prompt="q", assertions=assertions, weight=weight)
    return TestLabRow(test_case=case, model_key=model, actual_output=answer)


def test_a_models_weighted_score_weights_each_case() -> None:
    two = [check("CONTAINS_ANY", "fee"), check("CONTAINS_ANY", "refund")]
    rows = [
        _row("full", "fee and refund", 1.0, two),
        _row("half", "fee only", 0.5, two),
        _row("zero", "nothing", 0.25, two),
        _row("unscored", "x", 1.0, [check("CONTAINS_ANY", "{{undefined}}")]),
        _row("other", "fee", 1.0, two, model="n"),
    ]
    models = [ModelHost(key=key, type="testlab") for key in ("m", "n")]
    result = run_evaluator(build_evaluator("assertions"), TestLab(name="lab", models=models, rows=rows))
    model = result.aggregates["m"]
    assert model["assertion_score"].mean == 50.0 and model["assertion_score"].passed == 1
    assert model["assertion_score"].unscored == 1
    weighted = model["weighted_assertion_score"]
    assert weighted.corpus_level and weighted.mean == round((100.0 + 0.5 * 50.0) / 1.75, 6)
    assert result.aggregates["n"]["weighted_assertion_score"].mean == 50.0
    assert result.model_details["m"] == {"case_weight_total": 1.75}
    zero_weight = [_row("a", "fee", 0.0, two)]
    result = run_evaluator(build_evaluator("assertions"), TestLab(name="lab", models=models[:1], rows=zero_weight))
    assert result.aggregates["m"]["weighted_assertion_score"].mean is None


def listed(*assertions: Assertion, **fields: Any) -> list[dict[str, Any]]:
    result = outcome(*assertions, **fields)
    assert result.unscored_reason is None, result.unscored_reason
    return result.details["assertions"]


def test_details_list_every_assertion_with_the_reason_each_failure_has() -> None:
    answer = '{"city": "Lyon", "temperature": 21, "note": "Sorry, it is cold"}'
    entries = listed(
        check("EXACT_MATCH", "Paris", json_path="$.city"),
        check("EXACT_MATCH", "21", json_path="$.temperature", weight=0.5),
        check("CONTAINS_ANY", "sorry", "cannot", negate=True, ignore_case=True),
        check("CONTAINS_ALL", "Lyon", "hot", "rain"),
        check("EXACT_MATCH", "x", json_path="$.missing", weight=0.0),
        actual_output=answer,
        response_format="json",
    )
    assert [(entry["index"], entry["type"], entry["passed"], entry["weight"]) for entry in entries] == [
        (0, "EXACT_MATCH", False, 1.0),
        (1, "EXACT_MATCH", True, 0.5),
        (2, "CONTAINS_ANY", False, 1.0),
        (3, "CONTAINS_ALL", False, 1.0),
        (4, "EXACT_MATCH", False, 0.0),
    ]
    assert [entry.get("reason") for entry in entries] == [
        "$.city of the answer ('Lyon') does not equal 'Paris'",
        None,  # a passed assertion has no reason
        "negated, but the answer contains 'sorry'",
        "the answer lacks 'hot', 'rain'",
        "$.missing of the answer selects nothing",
    ]


def test_reasons_for_tools_thresholds_turns_and_invalid_json() -> None:
    calls = [ToolCall(name="search", arguments={"q": "fees"}), ToolCall(name="calculator")]
    reasons = [
        entry.get("reason")
        for entry in listed(
            check("TOOL_CALLED_WITH", "search", arguments={"q": "rates"}),
            check("TOOL_CALLED", "calculator", negate=True),
            check("TOOL_CALLED", "search"),
            Assertion(type="LATENCY", threshold=2.0),
            Assertion(type="COST", threshold=0.01, negate=True),
            check("STARTS_WITH", "Yes", turn=-1),
            tool_calls=calls,
            duration=3.25,
            cost=0.004,
            turns=[ConversationTurn(role="assistant", content="No. " + "The fee applies to every transfer. " * 3)],
        )
    ]
    long_turn = "'No. The fee applies to every transfer. The fee applies to...'"  # cut at 60 characters
    assert reasons == [
        "no call to 'search' with the expected arguments (calls: 'search', 'calculator')",
        "negated, but 'calculator' was called",
        None,
        "duration 3.25 exceeds the threshold 2",
        "negated, but cost 0.004 is within the threshold 0.01",
        f"assistant turn -1 ({long_turn}) does not start with 'Yes'",
    ]
    [invalid] = listed(check("CONTAINS_ANY", "x"), actual_output="not json", response_format="json")
    assert invalid == {
        "index": 0,
        "type": "CONTAINS_ANY",
        "passed": False,
        "weight": 1.0,
        "reason": "the response is not valid JSON",
    }
    turns = [ConversationTurn(role="assistant", content="plain")]
    [turn] = listed(
        check("EXACT_MATCH", "1", json_path="$.a", turn=0), turns=turns, actual_output="{}", response_format="json"
    )
    assert turn["reason"] == "assistant turn 0 is not valid JSON"


def test_describe_text_reports_several_selected_values_briefly() -> None:
    values = ["alpha", "beta", "gamma", "delta"]
    assert (
        describe_text("EXACT_MATCH", values, ["omega"], False, "$.items[*]")
        == "$.items[*] ('alpha', 'beta', 'gamma' (+1 more)) does not equal 'omega'"
    )
    assert describe_text("CONTAINS_ANY", values, ["x", "y"], False, "it") == "it contains none of 'x', 'y'"
    assert describe_text("CONTAINS_ALL", values, ["ALPHA"], True, "it") == "it contains 'ALPHA'"
