"""Fresh hostile inputs for bench/reliability.py, drawn from the fuzz suite's strategies plus the issue's corpus."""

import json
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import NonInteractiveExampleWarning

from assay.testing.formats import ALL_FORMAT_SUFFIXES
from tests.fuzz import strategies as fuzz
from tests.fuzz.test_fuzz_expressions import conditions, json_paths, schemas

_WORKDIR = Path(tempfile.mkdtemp(prefix="assay-fuzz-bench-"))
HOSTILE_CONDITIONS = ['regexp("a{1000000000}")', 'regexp("(a+)+$")', "(" * 250 + '"x"' + ")" * 250, 'regexp("(?")']
HOSTILE_PATHS = ['$[?(@.name =~ "(a+)+$")]', "$" + ".a" * 5000, "$[" * 300]


def _draw(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        return [strategy.example() for _ in range(count)]


def import_one(item: tuple[str, str, bytes]) -> str:
    from assay.formats import FormatError, import_file

    format, suffix, data = item
    path = _WORKDIR / f"input{suffix}"
    path.write_bytes(data)
    try:
        import_file(path, format)
    except FormatError as error:
        return "refused" if str(path) in str(error) else f"crash: error does not name the file: {error}"
    return "ok"


_SUITE = '{"schema_version": 1, "name": "s", "tests": [{"key": "t", "test_cases": [{"key": "a", "prompt": "%s"}]}]'
_LAB_ROWS = '[{"test_case": {"key": "a", "prompt": "q"}, "model_key": "m", "actual_output": "%s"}]'
_LAB = '{"schema_version": 1, "name": "l", "models": [{"key": "m", "type": "t"}], "rows": %s%s}'
_TESTLAB = '{"name": "l", "models": [], "dataset": {"inputs": []}, "dataset": {"inputs": []}}'
REPEATED = "is repeated"
LONE = "lone surrogate"
CELLS = "but the header has"
HOSTILE_FILES: list[tuple[str, str, str, str]] = [
    # (format, suffix, text, what the refusal must say): each would import with data silently lost or broken
    ("assay", ".json", _SUITE % "q" + ', "tests": []}', REPEATED),
    ("auto", ".json", _LAB % (_LAB_ROWS % "a", ', "rows": []'), REPEATED),
    ("eval-studio-testlab", ".json", _TESTLAB, REPEATED),
    ("assay", ".json", _LAB % (_LAB_ROWS.replace('"actual_output"', '"cost": 1, "cost": 2, "actual_output"') % "a", ""),
     REPEATED),
    ("mlflow", ".jsonl", '{"request": "q1", "response": "a1"}\n{"request": "q2", "response": "a2", "response": null}',
     REPEATED),
    ("ragas", ".jsonl", '{"user_input": "q", "response": "a", "respons\\u0065": null}', REPEATED),
    ("assay", ".json", _SUITE % "q \\ud800" + "}", LONE),
    ("auto", ".json", _LAB % (_LAB_ROWS % "\\udfff", ""), LONE),
    ("mlflow", ".jsonl", '{"request": "q", "response": "\\ude00\\ud83d"}', LONE),
    ("ragas", ".json", '[{"user_input": "q", "\\udc00": "x"}]', LONE),
    ("ragas", ".csv", 'user_input,retrieved_contexts\nq,"[""\\ud800""]"\n', LONE),
    ("ragas", ".csv", "user_input,response,reference\nq1,a1,r1\nq2,a2 cut sh", CELLS),
    ("auto", ".csv", "user_input,response\nq1\n", CELLS),
    ("ragas", ".csv", "user_input,response\nq1,a1, unquoted comma\n", CELLS),
]


def refuse_one(item: tuple[str, str, str, str]) -> str:
    """A hostile file must be refused, naming the file and the problem; importing it is a failure."""
    from assay.formats import FormatError, import_file

    format, suffix, text, expected = item
    path = _WORKDIR / f"hostile{suffix}"
    path.write_text(text, encoding="utf-8")
    try:
        import_file(path, format)
    except FormatError as error:
        if str(path) in str(error) and expected in str(error):
            return "refused"
        return f"crash: refused without naming the file and {expected!r}: {error}"
    return "crash: imported although data would be lost"


def condition_one(item: tuple[str, str]) -> str:
    return _score("text_matching", {"output_condition": item[0], "actual_output": item[1] or "x"})


def path_one(item: tuple[str, Any]) -> str:
    from assay.evaluators._assertion_checks import AssertionProblem, select

    try:
        select(item[0], item[1])
    except AssertionProblem:
        return "refused"
    return "ok"


def schema_one(item: tuple[Any, str]) -> str:
    fields = {"constraints": [fuzz.dumps(item[0])], "actual_output": item[1] or "{}", "response_format": "json"}
    return _score("json_schema", fields)


def _score(evaluator_id: str, fields: dict[str, Any]) -> str:
    from assay.evaluators.base import CaseContext
    from assay.evaluators.registry import build_evaluator
    from assay.evaluators.runner import score_case

    reason = score_case(build_evaluator(evaluator_id), CaseContext.build(**fields)).unscored_reason
    if reason and "evaluator error" in reason:
        return f"crash: {reason[:200]}"
    return "refused" if reason else "ok"


def _file_inputs(count: int) -> list[tuple[str, str, bytes]]:
    items = []
    for format, suffix in ALL_FORMAT_SUFFIXES:
        texts = _draw(fuzz.json_values.map(fuzz.dumps), count // 2)
        raw = _draw(st.binary(max_size=400), count // 4)
        deep = [fuzz.nested(depth) for depth in _draw(st.integers(1, 200_000), count - count // 2 - count // 4)]
        items += [(format, suffix, text.encode("utf-8", "surrogatepass")) for text in texts + deep]
        items += [(format, suffix, data) for data in raw]
    big_cell = 'user_input,response\nq,"' + "a" * 200_000 + '"\n'
    items.append(("ragas", ".csv", big_cell.encode()))
    return items


def suites(count: int) -> Iterator[tuple[str, Callable[[Any], str], list[Any]]]:
    """(name, entry point, inputs) for each fuzzed entry point."""
    yield "importers", import_one, _file_inputs(count)
    answers = _draw(fuzz.answers, count)
    yield "conditions", condition_one, list(zip(_draw(conditions, count) + HOSTILE_CONDITIONS,
                                                answers + ["a" * 31 + "!"] * len(HOSTILE_CONDITIONS), strict=True))
    documents = _draw(fuzz.json_values, count) + [{"name": "a" * 40 + "!"}] * len(HOSTILE_PATHS)
    yield "json paths", path_one, list(zip(_draw(json_paths, count) + HOSTILE_PATHS, documents, strict=True))
    hostile_schema = ({"type": "string", "pattern": "(a+)+$"}, json.dumps("a" * 31 + "!"))
    yield "json schemas", schema_one, [*zip(_draw(schemas, count), answers, strict=True), hostile_schema]
