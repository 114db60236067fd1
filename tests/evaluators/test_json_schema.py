"""JSON Schema: parsing (fences, strictness), where the schema comes from, and malformed schemas."""

import json

import pytest
from assay.evaluators import CaseContext, build_evaluator
from assay.evaluators.json_schema import parse_json, schema_constraints, strip_json_fence
from assay.evaluators.runner import score_case

from assay.models.evaluation import CaseScores

PRODUCT_SCHEMA = json.dumps(
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["product", "rate"],
        "properties": {
            "product": {"type": "string", "minLength": 1},
            "rate": {"type": "number", "minimum": 0, "maximum": 100},
            "contact": {"type": "string", "format": "email"},
        },
        "additionalProperties": False,
    }
)
PASS = {"model_passes": 1.0, "model_failures": 0.0, "model_generation_failures": 0.0}
UNRESOLVABLE = "test case js-1: schema reference cannot be resolved"
FAIL = {"model_passes": 0.0, "model_failures": 1.0, "model_generation_failures": 1.0}


def outcome(evaluator_parameters: dict | None = None, **fields: object) -> CaseScores:
    return score_case(build_evaluator("json_schema", **(evaluator_parameters or {})), CaseContext.build(**fields))


def score(evaluator_parameters: dict | None = None, **fields: object) -> dict[str, float | None]:
    result = outcome(evaluator_parameters, **fields)
    assert result.unscored_reason is None, result.unscored_reason
    return result.scores


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('```JSON\n{"a": 1}\n```', '{"a": 1}'),
        ("  ```\n[1, 2]\n```  ", "[1, 2]"),
        ('{"a": 1}', '{"a": 1}'),
        ("```python\nprint(1)\n```", "```python\nprint(1)\n```"),  # another language stays as it is
        ("```{}```", "```{}```"),  # no line break: not a fenced block
    ],
)
def test_json_fences_are_stripped(text: str, body: str) -> None:
    assert strip_json_fence(text) == body


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ('{"a": [1, 2.5, null, true]}', True),
        ("42", True),
        ('"just a string"', True),
        ("NaN", False),
        ('{"a": Infinity}', False),
        ("{'a': 1}", False),
        ('{"a": 1,}', False),
        ('Here you go: {"a": 1}', False),
        ('{"a": 1}\n\nHope this helps!', False),
        ("", False),
    ],
)
def test_only_strict_json_parses(text: str, parsed: bool) -> None:
    assert parse_json(text)[0] is parsed


def test_schema_constraints_are_json_objects_with_a_schema_or_type_key() -> None:
    constraints = [
        "Answer in under 50 words.",
        '{"type": "object"}',
        '{"$schema": "http://json-schema.org/draft-07/schema#"}',
        '{"tone": "formal"}',
        '["type"]',
        "{not json",
    ]
    assert [index for index, _ in schema_constraints(constraints)] == [1, 2]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"product": "Easy Access Saver", "rate": 3.25}', PASS),
        ('```json\n{"product": "Easy Access Saver", "rate": 3.25, "contact": "help@bank.example"}\n```', PASS),
        ('{"product": "Easy Access Saver"}', FAIL),  # required "rate" missing
        ('{"product": "Easy Access Saver", "rate": "3.25%"}', FAIL),  # wrong type
        ('{"product": "Easy Access Saver", "rate": 250}', FAIL),  # above maximum
        ('{"product": "Saver", "rate": 3, "fee": 0}', FAIL),  # additional property
        ('{"product": "Saver", "rate": 3, "contact": "not an email"}', FAIL),  # format is checked
        ("The Easy Access Saver pays 3.25% AER.", FAIL),  # not JSON at all
    ],
)
def test_answers_are_validated_against_the_case_schema(answer: str, expected: dict) -> None:
    assert score(actual_output=answer, constraints=["Be concise.", PRODUCT_SCHEMA]) == expected


def test_json_response_format_without_schema_checks_parseability_only() -> None:
    assert score(actual_output='{"anything": ["goes"]}', response_format="json") == PASS
    assert score(actual_output="[]", response_format="json") == PASS
    assert score(actual_output="{oops}", response_format="json") == FAIL


def test_free_text_cases_without_schema_are_not_applicable_when_the_selection_says_so() -> None:
    evaluator = build_evaluator("json_schema", check_cases_without_schema=False)
    outcome = score_case(evaluator, CaseContext.build(actual_output="The fee is £25."))
    assert outcome.unscored_reason == (
        "not applicable: no JSON schema in its constraints, response format text, and no json_schema parameter"
    )


def test_the_parameter_schema_applies_when_the_case_has_none() -> None:
    parameters = {"json_schema": '{"type": "array", "items": {"type": "integer"}, "minItems": 2}'}
    assert score(parameters, actual_output="[1, 2, 3]") == PASS
    assert score(parameters, actual_output="[1]") == FAIL
    assert score(parameters, actual_output='{"a": 1}', constraints=["Reply in JSON."]) == FAIL


def test_a_case_schema_takes_precedence_over_the_parameter() -> None:
    parameters = {"json_schema": '{"type": "array"}'}
    assert score(parameters, actual_output='{"product": "Saver", "rate": 1}', constraints=[PRODUCT_SCHEMA]) == PASS


def test_every_schema_constraint_must_hold() -> None:
    constraints = ['{"type": "object", "required": ["a"]}', '{"type": "object", "required": ["b"]}']
    assert score(actual_output='{"a": 1, "b": 2}', constraints=constraints) == PASS
    assert score(actual_output='{"a": 1}', constraints=constraints) == FAIL


def test_a_draft_07_schema_is_validated_by_its_own_draft() -> None:
    schema = json.dumps(
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "string"}]}
    )
    assert score(actual_output='["a", 1]', constraints=[schema]) == PASS  # draft-07 tuple items
    assert score(actual_output="[1]", constraints=[schema]) == FAIL


@pytest.mark.parametrize(
    ("parameters", "constraints", "reason"),
    [
        ({"json_schema": "{not json"}, [], "test case js-1: the json_schema parameter is not valid JSON"),
        ({"json_schema": "[1, 2]"}, [], "test case js-1: the json_schema parameter must be a JSON object, got list"),
        ({}, ['{"type": "strnig"}'], "test case js-1: constraint 1 (a JSON Schema) is not a valid JSON Schema"),
        ({}, ["Be brief.", '{"type": "object", "minProperties": -1}'], "test case js-1: constraint 2 (a JSON"),
        ({}, ['{"type": "object", "$ref": "#/$defs/missing"}'], UNRESOLVABLE),
        ({}, ['{"type": "object", "$ref": "https://example.com/s.json"}'], UNRESOLVABLE),  # never fetched
    ],
)
def test_a_malformed_schema_leaves_the_case_unscored_with_the_reason(
    parameters: dict, constraints: list[str], reason: str
) -> None:
    result = outcome(parameters, test_case_key="js-1", actual_output='{"a": 1}', constraints=constraints)
    assert result.unscored_reason is not None and result.unscored_reason.startswith(reason), result.unscored_reason
    assert result.scores == {}


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("The rate is 3.25%.", {"message": "Expecting value", "line": 1, "column": 1}),
        ('{"a": 1,\n "b": }', {"message": "Expecting value", "line": 2, "column": 7}),
        ('```json\n{"a": 1,\n "b": }\n```', {"message": "Expecting value", "line": 3, "column": 7}),
        ("```json\njson\n```", {"message": "Expecting value", "line": 2, "column": 1}),  # not the fence's "json"
        ('  {"a": 1', {"message": "Expecting ',' delimiter", "line": 1, "column": 10}),
        ('{"a": NaN}', {"message": "NaN is not valid JSON"}),
    ],
)
def test_a_parse_failure_reports_the_parser_message_with_line_and_column_in_the_answer(
    answer: str, problem: dict
) -> None:
    result = outcome(actual_output=answer, response_format="json")
    assert result.scores == FAIL and result.details == {"parse_error": problem}


def test_schema_violations_are_listed_by_json_path() -> None:
    answer = '{"product": "", "rate": 300, "contact": "not-an-email", "extra": 1}'
    result = outcome({"json_schema": PRODUCT_SCHEMA}, actual_output=answer)
    assert result.scores == FAIL
    assert result.details == {
        "validation_errors": [
            {"path": "$.product", "message": "'' should be non-empty"},
            {"path": "$.rate", "message": "300 is greater than the maximum of 100"},
            {"path": "$.contact", "message": "'not-an-email' is not a 'email'"},
            {"path": "$", "message": "Additional properties are not allowed ('extra' was unexpected)"},
        ]
    }


def test_validation_errors_are_capped_and_name_their_schema_when_there_are_several() -> None:
    items = json.dumps({"type": "array", "items": {"type": "integer"}})
    short = json.dumps({"type": "array", "maxItems": 2})
    result = outcome(actual_output=json.dumps(["x"] * 12), constraints=[short, items])
    errors = result.details["validation_errors"]
    assert len(errors) == 10 and result.details["more_validation_errors"] is True
    assert errors[0] == {
        "schema": "constraint 1 (a JSON Schema)",
        "path": "$",
        "message": errors[0]["message"],
    } and errors[0]["message"].endswith("is too long")
    assert errors[1] == {
        "schema": "constraint 2 (a JSON Schema)",
        "path": "$[0]",
        "message": "'x' is not of type 'integer'",
    }


def test_long_messages_are_cut_and_a_valid_answer_has_no_details() -> None:
    long_value = "y" * 500
    result = outcome(actual_output=json.dumps({"v": long_value}), constraints=['{"type": "array"}'])
    [error] = result.details["validation_errors"]
    assert len(error["message"]) == 200 and error["message"].endswith("...")
    assert outcome(actual_output='{"a": 1}').details == {}
