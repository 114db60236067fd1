"""Documents written through orjson are the bytes the standard encoder writes, and nothing orjson refuses is lost;
JSON read from users keeps every key and holds only characters."""

import json
import math
import pickle

import pytest

from assay.jsonio import JSONInputError, pretty_json, strict_loads

DOCUMENT = {
    "run": "r-1",
    "rows": [
        {"key": "case-1", "score": 0.125, "unscored": None, "passed": True, "tags": []},
        {"key": "cas\u00e9-2 \u2014 \u00a3", "score": 0.000125, "big": 2**63 - 1, "nested": {"z": 1, "a": [1.5, {}]}},
    ],
    "text": 'quotes " and \\ and </script> and \u001b[31m control',
}


@pytest.mark.parametrize("sort_keys", [False, True])
def test_the_same_text_as_json_dumps_with_indent_two(sort_keys: bool) -> None:
    expected = json.dumps(DOCUMENT, indent=2, ensure_ascii=False, sort_keys=sort_keys) + "\n"
    assert pretty_json(DOCUMENT, sort_keys=sort_keys) == expected


def test_what_orjson_refuses_goes_through_the_standard_encoder() -> None:
    odd = {"huge": 10**30, "surrogate": "\ud800", 7: "integer key"}
    assert pretty_json(odd) == json.dumps(odd, indent=2, ensure_ascii=False) + "\n"


def test_default_serialises_unknown_objects() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    assert json.loads(pretty_json({"value": Opaque()}, default=str)) == {"value": "opaque"}


def test_exponents_differ_only_in_spelling_and_nan_becomes_valid_json() -> None:
    """orjson writes 1e-7 where the standard encoder writes 1e-07 (the same number), and NaN, which is not
    JSON (a browser's JSON.parse refuses it), as null."""
    assert json.loads(pretty_json({"tiny": 1e-07, "huge": 1.5e300})) == {"tiny": 1e-07, "huge": 1.5e300}
    assert json.loads(pretty_json({"value": math.nan})) == {"value": None}


# Reading: strict_loads refuses a repeated key and a lone surrogate (issue 25, items 3 and 4).


def test_strict_loads_reads_what_json_loads_reads() -> None:
    text = json.dumps(DOCUMENT, indent=2)
    assert strict_loads(text) == json.loads(text)
    assert strict_loads('{"pair": "\\ud83d\\ude00", "text": "\\\\ud800"}') == {"pair": "\U0001f600", "text": "\\ud800"}


@pytest.mark.parametrize(
    ("text", "line", "column", "where", "key", "first"),
    [
        ('{"tests": [1],\n "name": "s",\n "tests": []}', 3, 2, "", "tests", 1),
        ('{"a": {"b": [{"x": 1}, {"x": 2,\n  "x": 3}]}}', 2, 3, "a.b[1]", "x", 1),
        ('[{"k": 1, "\\u006b": 2}]', 1, 11, "[0]", "k", 1),
    ],
)
def test_a_repeated_key_is_named_with_its_line_column_and_path(
    text: str, line: int, column: int, where: str, key: str, first: int
) -> None:
    with pytest.raises(JSONInputError) as caught:
        strict_loads(text)
    assert (caught.value.line, caught.value.column, caught.value.where) == (line, column, where)
    assert caught.value.message.startswith(f"the key {key!r} is repeated (first on line {first})")


def test_lines_count_from_first_line_for_a_jsonl_record() -> None:
    with pytest.raises(JSONInputError) as caught:
        strict_loads('{"a": 1, "a": 2}', first_line=7)
    assert str(caught.value).startswith("line 7 column 10: the key 'a' is repeated (first on line 7)")


@pytest.mark.parametrize(
    ("text", "column", "where", "what"),
    [
        ('{"a": "x\\ud800"}', 9, "a", "a string holds a lone surrogate (\\ud800)"),
        ('{"a": ["ok", "\\uDC00"]}', 15, "a[1]", "a string holds a lone surrogate (\\udc00)"),
        ('{"a": {"\\ud800": 1}}', 9, "a", "a key holds a lone surrogate (\\ud800)"),
        ('"\\ude00\\ud83d"', 2, "", "a string holds a lone surrogate (\\ude00)"),
        ('["\\\\\\ud800"]', 5, "[0]", "a string holds a lone surrogate (\\ud800)"),
        ('["raw \ud800"]', 7, "[0]", "a string holds a lone surrogate (\\ud800)"),
    ],
)
def test_a_lone_surrogate_is_named_with_its_column_and_path(text: str, column: int, where: str, what: str) -> None:
    with pytest.raises(JSONInputError) as caught:
        strict_loads(text)
    assert (caught.value.line, caught.value.column, caught.value.where) == (1, column, where)
    assert caught.value.message.startswith(what)


def test_syntax_errors_stay_json_decode_errors() -> None:
    with pytest.raises(json.JSONDecodeError):
        strict_loads('{"a": 1, "a": ')


def test_the_error_survives_pickling() -> None:
    error = JSONInputError(3, 4, "rows[0]", "the key 'x' is repeated")
    assert str(pickle.loads(pickle.dumps(error))) == str(error) == "line 3 column 4: rows[0]: the key 'x' is repeated"
