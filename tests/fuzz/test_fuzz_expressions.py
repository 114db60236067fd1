"""Fuzzing the expression languages a test suite may carry: conditions, JSON paths and JSON Schemas.

Parsing and matching may refuse an expression (ConditionError, AssertionProblem) but never crash, hang or
grow without bound; through an evaluator, every hostile input becomes a scored or unscored case whose reason
is the input's fault, never an "evaluator error" (a bug in our code).
"""

from typing import Any

from assay.evaluators import run_evaluator
from assay.evaluators._assertion_checks import AssertionProblem, compile_path, select
from assay.evaluators.base import CaseContext
from assay.evaluators.conditions import ConditionError, parse_condition
from assay.evaluators.registry import build_evaluator
from assay.evaluators.runner import score_case
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.strategies import (
    CONDITION_TOKENS,
    FUZZ,
    JSON_PATH_TOKENS,
    REGEX_TOKENS,
    answers,
    dumps,
    joined,
    json_values,
    nested,
)

conditions = st.one_of(
    joined(CONDITION_TOKENS),
    joined(REGEX_TOKENS).map(lambda pattern: f'regexp("{pattern}")'),
    st.integers(min_value=1, max_value=5000).map(lambda depth: nested(depth, "(", ")").replace("()", '("x")')),
    st.text(max_size=40),
)


def _no_evaluator_error(reason: str | None) -> None:
    assert reason is None or "evaluator error" not in reason, reason


@FUZZ
@given(condition=conditions, text=answers)
def test_conditions_parse_and_match_or_refuse(condition: str, text: str) -> None:
    try:
        node = parse_condition(condition)
        assert isinstance(node.matches(text), bool)
    except ConditionError:
        pass


@FUZZ
@given(condition=conditions, text=answers)
def test_text_matching_never_errors(condition: str, text: str) -> None:
    evaluator = build_evaluator("text_matching")
    outcome = score_case(evaluator, CaseContext.build(output_condition=condition, actual_output=text or "x"))
    _no_evaluator_error(outcome.unscored_reason)


json_paths = st.one_of(
    joined(JSON_PATH_TOKENS),
    joined(REGEX_TOKENS).map(lambda pattern: f'$[?(@.name =~ "{pattern}")]'),
    st.text(max_size=30),
)


@FUZZ
@given(path=json_paths, document=json_values | st.just({"name": "a" * 40 + "!"}))
@example(path='sorted&"(a+)+$"', document=[])  # found by bench/reliability.py: parses, then NotImplementedError
def test_json_paths_select_or_refuse(path: str, document: Any) -> None:
    try:
        compile_path(path)
        assert isinstance(select(path, document), list)
    except AssertionProblem:
        pass


def _nots(depth: int) -> dict[str, Any]:
    """``{"not": {"not": ...}}`` ``depth`` levels deep, built without recursion."""
    schema: dict[str, Any] = {}
    for _ in range(depth):
        schema = {"not": schema}
    return schema


SCHEMA_KEYWORDS = ["type", "pattern", "patternProperties", "$ref", "properties", "items", "allOf", "anyOf",
                   "not", "format", "$defs", "$id", "required", "enum", "minLength", "additionalProperties"]
schemas = st.one_of(
    st.dictionaries(st.sampled_from(SCHEMA_KEYWORDS), json_values, max_size=4).map(lambda s: {"type": "object"} | s),
    st.sampled_from([
        {"type": "string", "pattern": "(a+)+$"},
        {"type": "object", "patternProperties": {"(a+)+$": {}}},
        {"$ref": "http://127.0.0.1:9/schema.json"},
        {"$ref": "#/$defs/missing"},
        {"type": "string", "format": "regex"},
        {"type": "object", "properties": {"name": {"pattern": "a{1000000000}"}}},
    ]),
    st.integers(min_value=100, max_value=700).map(lambda depth: {"type": "object", "properties": {"a": _nots(depth)}}),
)


@FUZZ
@given(schema=schemas, answer=answers)
def test_json_schema_never_errors(schema: dict[str, Any], answer: str) -> None:
    evaluator = build_evaluator("json_schema")
    case = CaseContext.build(constraints=[dumps(schema)], actual_output=answer or "{}", response_format="json")
    _no_evaluator_error(score_case(evaluator, case).unscored_reason)


@FUZZ
@given(constraint=st.integers(min_value=1, max_value=100_000).map(nested), answer=answers)
def test_deep_constraints_leave_only_their_case_unscored(constraint: str, answer: str) -> None:
    """A constraint nested too deep to parse concerns its own case; the lab's other case is still scored."""
    from assay.models import ModelHost, TestCase, TestLab, TestLabRow

    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt="q", constraints=constraints, response_format="json"),
            model_key="m",
            actual_output=output,
        )
        for key, constraints, output in [
            ("hostile", [constraint], answer or "x"),
            ("plain", ['{"type": "object"}'], "{}"),
        ]
    ]
    lab = TestLab(name="fuzz", models=[ModelHost(key="m", type="testlab")], rows=rows)
    result = run_evaluator(build_evaluator("json_schema"), lab)
    plain = next(row for row in result.rows if row.test_case_key == "plain")
    assert plain.scores.get("model_passes") == 1.0
    for row in result.rows:
        _no_evaluator_error(row.unscored_reason)
