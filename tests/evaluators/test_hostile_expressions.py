"""Issue 7, items 1, 2, 3, 6 and 15: expressions from a test suite (conditions, regexes, JSON Schemas, JSON paths)
and answers from a model can neither fetch, hang, exhaust memory nor crash a run; each problem stays on its case.

The hang tests carry a ``timeout`` mark: on the old code they ran for minutes, here they must end in seconds.
The memory test runs in a subprocess with a capped address space, so a regression fails instead of taking the
machine down.
"""

import json
import resource
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest
from assay.evaluators import CaseContext, build_evaluator, run_evaluator
from assay.evaluators._assertion_checks import AssertionProblem, compile_path, select
from assay.evaluators.base import Evaluator
from assay.evaluators.conditions import ConditionError, parse_condition
from assay.evaluators.runner import score_case

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import EvaluatorSpec, MetricMeta
from assay.testing.local_app import serving_handler

REPOSITORY = Path(__file__).resolve().parents[2]
CATASTROPHIC = "(a|aa)+$"  # exponential under backtracking, in the regex package as in re
LONG_A = "a" * 5000 + "!"
DEEP_ANSWER = "[" * 100_000 + "]" * 100_000


def lab_of(*rows: tuple[str, list[str], str]) -> TestLab:
    """A one-model lab of (case key, constraints, answer) JSON cases."""
    return TestLab(
        name="hostile",
        models=[ModelHost(key="m", type="testlab")],
        rows=[
            TestLabRow(
                test_case=TestCase(key=key, prompt="q", constraints=constraints, response_format="json"),
                model_key="m",
                actual_output=answer,
            )
            for key, constraints, answer in rows
        ],
    )


def json_schema_outcome(schema: dict[str, Any] | str, answer: str, **parameters: Any) -> Any:
    constraint = schema if isinstance(schema, str) else json.dumps(schema)
    case = CaseContext.build(test_case_key="js-1", constraints=[constraint], actual_output=answer)
    return score_case(build_evaluator("json_schema", **parameters), case)


# Item 2: one condition could take the machine down.


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


COSTLY_PATTERNS = {
    "a{1000000000}": "has the counted repeat {1000000000} at position 1; counts above 1000 are refused",
    "(?:a{1000}){1000}": "multiplies out to more than 100000 elements",
    "(?x)#[\n(?:(?:a{1000}){1000}){1000}": "multiplies out to more than 100000 elements",  # hidden in a comment?
    "(?:" * 150 + "a" + ")" * 150: "nests groups deeper than 100 (at position 300)",
    "a" * 6000: "is 6000 characters long; the limit is 5000",
}
_PROBE = """
import json, resource, sys
from assay.evaluators.conditions import ConditionError, parse_condition
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
said = []
for condition in json.load(sys.stdin):
    try:
        parse_condition(condition)
        said.append("accepted")
    except ConditionError as error:
        said.append(str(error))
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - imported
print(json.dumps({"said": said, "grown_mib": grown // 1024}))
"""


@pytest.fixture(scope="module")
def costly_parses() -> dict[str, Any]:
    """What parsing ``regexp("...")`` of each costly pattern said, and how far peak memory grew while parsing
    them (imports excluded), from one subprocess capped at 2 GiB of address space: a pattern that blows up at
    compile time fails the tests there instead of taking the test machine down (on the old code
    ``a{1000000000}`` grew the process to 21 GB)."""
    conditions = [f'regexp("{pattern}")' for pattern in COSTLY_PATTERNS]
    finished = subprocess.run(
        [sys.executable, "-c", _PROBE],
        input=json.dumps(conditions),
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=25,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    report = json.loads(finished.stdout)
    return {"said": dict(zip(COSTLY_PATTERNS, report["said"], strict=True)), "grown_mib": report["grown_mib"]}


@pytest.mark.timeout(30)
def test_a_huge_counted_repeat_is_a_clear_condition_error_without_growing_memory(costly_parses: dict[str, Any]) -> None:
    assert costly_parses["said"]["a{1000000000}"] == (
        "unsafe regexp at position 0: regex 'a{1000000000}' has the counted repeat {1000000000} at position 1; "
        "counts above 1000 are refused"
    )
    assert costly_parses["grown_mib"] < 50


@pytest.mark.timeout(30)
@pytest.mark.parametrize("pattern", list(COSTLY_PATTERNS))
def test_patterns_too_costly_to_compile_are_refused_with_the_limit(costly_parses: dict[str, Any], pattern: str) -> None:
    said = costly_parses["said"][pattern]
    assert said.startswith("unsafe regexp at position 0: regex ") and COSTLY_PATTERNS[pattern] in said, said


@pytest.mark.parametrize(
    "pattern",
    [r"15,?969 [Mm]illion", r"\p{L}{2,5}", r"[{}]x{2,}", r"(?x) fee \s* \d+  # a comment {99999}", r"\d{1000}"],
)
def test_ordinary_patterns_still_compile_and_match(pattern: str) -> None:
    text = "Brazil 15969 million fee 25 {}xx éé " + "7" * 1000
    assert parse_condition(f'regexp("{pattern}")').matches(text)


# Item 6 (conditions): deep nesting is a parse failure, counted as one.


@pytest.mark.parametrize("condition", ["(" * 250 + '"x"' + ")" * 250, "NOT " * 250 + '"x"'])
def test_250_nested_levels_are_a_condition_error(condition: str) -> None:
    with pytest.raises(ConditionError, match="deeper than 100 levels"):
        parse_condition(condition)


def test_text_matching_counts_a_too_deep_condition_as_a_parse_failure() -> None:
    condition = "(" * 250 + '"x"' + ")" * 250
    outcome = score_case(
        build_evaluator("text_matching"),
        CaseContext.build(test_case_key="tm-1", output_condition=condition, actual_output="x"),
    )
    assert outcome.unscored_reason is not None
    assert outcome.unscored_reason.startswith("test case tm-1: condition ")
    assert outcome.unscored_reason.endswith("nests parentheses and NOT deeper than 100 levels (at position 100)")
    assert outcome.scores == {"model_parse_failures": 1.0}


# Item 3: every user regex runs under the bounded engine.


@pytest.mark.timeout(10)
def test_a_json_schema_pattern_that_backtracked_for_minutes_is_decided_in_time() -> None:
    outcome = json_schema_outcome({"type": "string", "pattern": "(a+)+$"}, json.dumps("a" * 31 + "!"))
    assert outcome.unscored_reason is None and outcome.scores["model_passes"] == 0.0


@pytest.mark.timeout(15)
@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": CATASTROPHIC},
        {"type": "object", "propertyNames": {"pattern": CATASTROPHIC}},
        {"type": "object", "patternProperties": {CATASTROPHIC: {}}},
        {"type": "object", "patternProperties": {"^x": {}, CATASTROPHIC: {}}, "additionalProperties": False},
    ],
)
def test_a_json_schema_regex_out_of_time_leaves_the_case_unscored(schema: dict[str, Any]) -> None:
    answer = json.dumps(LONG_A) if schema["type"] == "string" else json.dumps({LONG_A: 1})
    outcome = json_schema_outcome(schema, answer)
    assert outcome.unscored_reason == (
        "test case js-1: constraint 1 (a JSON Schema) cannot be checked: regex '(a|aa)+$' took longer than 1s "
        "on a 5001-character text (catastrophic backtracking?)"
    )


def test_a_json_schema_pattern_too_costly_to_compile_leaves_the_case_unscored() -> None:
    outcome = json_schema_outcome({"type": "string", "pattern": "a{1000000000}"}, '"a"')
    assert outcome.unscored_reason is not None
    assert outcome.unscored_reason.startswith(
        "test case js-1: constraint 1 (a JSON Schema) has a pattern that cannot be used: regex 'a{1000000000}'"
    )


def test_unevaluated_properties_with_pattern_properties_is_refused_not_run_unbounded() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {}}, "unevaluatedProperties": False}
    outcome = json_schema_outcome(schema, '{"x": 1}')
    assert outcome.unscored_reason is not None and "combines unevaluatedProperties" in outcome.unscored_reason


def test_bounded_schema_keywords_keep_their_verdicts_and_messages() -> None:
    schema = {"type": "object", "properties": {"id": {}}, "patternProperties": {"^x-": {"type": "integer"}}}
    closed = schema | {"additionalProperties": False}
    assert json_schema_outcome(closed, '{"id": 1, "x-a": 2}').scores["model_passes"] == 1.0
    failed = json_schema_outcome(closed, '{"id": 1, "x-a": "2", "other": 3}')
    assert failed.details["validation_errors"] == [
        {"path": "$['x-a']", "message": "'2' is not of type 'integer'"},
        {"path": "$", "message": "'other' does not match any of the regexes: '^x-'"},
    ]
    typed_extras = schema | {"additionalProperties": {"type": "string"}}
    assert json_schema_outcome(typed_extras, '{"other": 3}').details["validation_errors"] == [
        {"path": "$.other", "message": "3 is not of type 'string'"}
    ]
    regex_format = {"type": "string", "format": "regex"}
    assert json_schema_outcome(regex_format, '"^a+$"').scores["model_passes"] == 1.0
    assert json_schema_outcome(regex_format, '"("').scores["model_passes"] == 0.0


@pytest.mark.timeout(10)
def test_a_json_path_regex_filter_is_decided_in_time() -> None:
    path = '$[?(@.name =~ "(a+)+$")]'
    assert select(path, [{"name": "a" * 40 + "!"}, {"name": "aaa"}]) == [{"name": "aaa"}]


@pytest.mark.timeout(10)
def test_a_json_path_regex_filter_out_of_time_is_an_assertion_problem() -> None:
    with pytest.raises(AssertionProblem, match=r"cannot be applied to the response: regex '\(a\|aa\)\+\$' took"):
        select(f'$[?(@.name =~ "{CATASTROPHIC}")]', [{"name": LONG_A}])


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ('$[?(@.name =~ "a{1000000000}")]', "counts above 1000 are refused"),
        ('$[?(@.name =~ "(")]', "regex '(' is invalid"),
        ("$.name.`sub(/a{100000000}/, b)`", "counts above 1000 are refused"),
        ("$" + ".a" * 600, "the limit is 1000"),
    ],
)
def test_json_paths_with_unusable_regexes_do_not_parse(path: str, fragment: str) -> None:
    with pytest.raises(AssertionProblem) as problem:
        compile_path(path)
    assert fragment in str(problem.value)


@pytest.mark.timeout(10)
def test_json_path_sub_runs_on_the_bounded_engine() -> None:
    assert select("$.name.`sub(/o+/, 0)`", {"name": "foo"}) == ["f0"]
    with pytest.raises(AssertionProblem, match="took longer than"):
        select(f"$.name.`sub(/{CATASTROPHIC}/, b)`", {"name": LONG_A})


# Item 1: no $ref is ever fetched.


@dataclass
class RecordingServer:
    url: str
    hits: list[str]


@pytest.fixture
def schema_server() -> Iterator[RecordingServer]:
    """An HTTP server on 127.0.0.1 that would serve a schema and records every request it gets."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = json.dumps({"type": "string"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    with serving_handler(Handler) as url:
        yield RecordingServer(url=f"{url}/schema.json", hits=hits)


def test_a_remote_ref_is_never_fetched_and_leaves_the_case_unscored_naming_it(
    schema_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[object] = []
    real_create_connection, real_urlopen = socket.create_connection, urllib.request.urlopen

    def record_connection(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        return real_create_connection(*args, **kwargs)

    def record_urlopen(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        return real_urlopen(*args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", record_connection)
    monkeypatch.setattr(urllib.request, "urlopen", record_urlopen)
    outcome = json_schema_outcome({"type": "object", "$ref": schema_server.url}, '{"a": 1}')
    assert outcome.unscored_reason == (
        f"test case js-1: schema reference cannot be resolved: constraint 1 (a JSON Schema) refers to "
        f"'{schema_server.url}', which it does not define (only references inside the schema are followed; "
        "nothing is fetched)"
    )
    assert (attempts, schema_server.hits) == ([], [])


def test_references_inside_the_schema_still_resolve() -> None:
    schema = {
        "type": "object",
        "properties": {"rate": {"$ref": "#/$defs/rate"}, "id": {"$ref": "https://bank.example/id"}},
        "$defs": {"rate": {"type": "number"}, "id": {"$id": "https://bank.example/id", "type": "integer"}},
    }
    assert json_schema_outcome(schema, '{"rate": 3.5, "id": 7}').scores["model_passes"] == 1.0
    assert json_schema_outcome(schema, '{"rate": "3.5", "id": 7}').scores["model_passes"] == 0.0
    meta = {"type": "object", "$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert json_schema_outcome(meta, '{"type": "string"}').scores["model_passes"] == 1.0


# Item 6: deep JSON (constraints, schemas, answers) stays on its case.


def test_a_constraint_too_deep_to_parse_leaves_only_its_case_unscored() -> None:
    deep = '{"type": "object", "a": ' + DEEP_ANSWER + "}"
    result = run_evaluator(
        build_evaluator("json_schema"),
        lab_of(("hostile", [deep], "{}"), ("plain", ['{"type": "object"}'], "{}")),
    )
    rows = {row.test_case_key: row for row in result.rows}
    assert rows["hostile"].unscored_reason == (
        "test case hostile: constraint 1 (a JSON Schema) is nested too deeply to read as JSON"
    )
    assert rows["plain"].unscored_reason is None and rows["plain"].scores["model_passes"] == 1.0


def test_a_schema_too_deep_to_check_and_an_answer_too_deep_to_parse_are_unscored_with_the_reason() -> None:
    deep_schema = {"type": "object", "properties": {"a": json.loads('{"not":' * 800 + "{}" + "}" * 800)}}
    assert json_schema_outcome(deep_schema, "{}").unscored_reason == (
        "test case js-1: constraint 1 (a JSON Schema) is nested too deeply to check"
    )
    assert json_schema_outcome({"type": "array"}, DEEP_ANSWER).unscored_reason == (
        "test case js-1: the answer nests too deeply to parse as JSON, so it cannot be checked"
    )


def test_assertions_leave_an_answer_too_deep_to_parse_unscored() -> None:
    from assay.models import Assertion

    case = CaseContext.build(
        test_case_key="as-1",
        actual_output=DEEP_ANSWER,
        response_format="json",
        assertions=[Assertion(type="CONTAINS_ANY", targets=["x"])],
    )
    outcome = score_case(build_evaluator("assertions"), case)
    assert outcome.unscored_reason == "test case as-1: the answer nests too deeply to parse as JSON"


@dataclass
class _BrokenApplicability(Evaluator):
    """An evaluator whose ``not_applicable`` raises on one case, as a plugin bug would."""

    spec: ClassVar[EvaluatorSpec] = EvaluatorSpec(
        id="broken_applicability",
        display_name="Broken applicability",
        description="Raises in not_applicable on the case keyed 'bad'.",
        domain="generation",
        required_inputs=["actual_output"],
        metrics=[MetricMeta(key="ok", display_name="OK", description="Always 1.", threshold=0.5, is_primary=True)],
    )
    golden: ClassVar[dict[str, dict[str, Any]]] = {}

    def not_applicable(self, case: CaseContext) -> str | None:
        if case.test_case_key == "bad":
            raise RecursionError("maximum recursion depth exceeded")
        return None

    def score(self, case: CaseContext) -> dict[str, float | None]:
        return {"ok": 1.0}


def test_an_exception_in_not_applicable_is_recorded_on_its_case_only() -> None:
    result = run_evaluator(_BrokenApplicability(), lab_of(("bad", [], "x"), ("good", [], "y")))
    rows = {row.test_case_key: row for row in result.rows}
    assert rows["bad"].unscored_reason == "evaluator error: RecursionError: maximum recursion depth exceeded"
    assert rows["good"].scores == {"ok": 1.0}


def test_selection_survives_an_exception_in_not_applicable(monkeypatch: pytest.MonkeyPatch) -> None:
    import assay.evaluators.selection as selection

    monkeypatch.setattr(selection, "evaluator_ids", lambda: ["broken_applicability"])
    monkeypatch.setattr(selection, "build_evaluator", lambda *args, **kwargs: _BrokenApplicability())
    assert selection.select_evaluators(lab_of(("bad", [], "x")), ["all"]) == (["broken_applicability"], {})


# Item 15: json_schema chosen by name checks parseability where a case has no schema.


def _free_text_lab(*answers: str) -> TestLab:
    rows = [
        TestLabRow(test_case=TestCase(key=f"c{index}", prompt="q"), model_key="m", actual_output=answer)
        for index, answer in enumerate(answers)
    ]
    return TestLab(name="plain", models=[ModelHost(key="m", type="testlab")], rows=rows)


def test_json_schema_chosen_by_name_checks_parseability_of_cases_without_schema() -> None:
    result = run_evaluator(build_evaluator("json_schema"), _free_text_lab('{"a":1}', "hello"))
    passes = [(row.unscored_reason, row.scores.get("model_passes")) for row in result.rows]
    assert passes == [(None, 1.0), (None, 0.0)]


def test_under_all_json_schema_still_skips_cases_without_schema() -> None:
    from assay.evaluators.selection import parameters_under_all, select_evaluators

    lab = _free_text_lab('{"a":1}', "hello")
    selected, skipped = select_evaluators(lab, ["all"])
    assert "json_schema" not in selected and skipped["json_schema"].startswith("applies to no test case (no JSON")
    evaluator = build_evaluator("json_schema", **parameters_under_all("json_schema"))
    assert {row.unscored_reason for row in run_evaluator(evaluator, lab).rows} == {
        "not applicable: no JSON schema in its constraints, response format text, and no json_schema parameter"
    }
    assert parameters_under_all("json_schema", {"check_cases_without_schema": True}) == {
        "check_cases_without_schema": True
    }


# The engine itself: what counts as a counted repeat, and the one timeout type.


@pytest.mark.parametrize(
    ("pattern", "refused"),
    [(r"\\{2000}", True), (r"\{2000\}", False), (r"[{2000}]", False), ("(?x:a{2000})", True), ("a{,2000}", True)],
)
def test_counted_repeats_are_read_as_the_engine_reads_them(pattern: str, refused: bool) -> None:
    from assay.bounded_regex import UnsafePattern, compile_pattern

    if refused:
        with pytest.raises(UnsafePattern, match="counts above 1000 are refused"):
            compile_pattern(pattern)
    else:
        compile_pattern(pattern)


@pytest.mark.timeout(10)
def test_a_match_out_of_time_raises_the_timeout_type_naming_pattern_and_text() -> None:
    from assay.bounded_regex import PatternTimeout, search

    with pytest.raises(PatternTimeout, match=r"regex '\(a\|aa\)\+\$' took longer than 1s on a 5001-character text"):
        search(CATASTROPHIC, LONG_A)


def test_a_json_path_operator_jsonpath_ng_cannot_evaluate_is_an_assertion_problem() -> None:
    """Found by bench/reliability.py: `&` parses but raises NotImplementedError when applied."""
    from assay.evaluators._assertion_checks import AssertionProblem, select

    with pytest.raises(AssertionProblem, match="not supported"):
        select('sorted&"(a+)+$"', [])
