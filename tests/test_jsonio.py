"""Documents written through orjson are the bytes the standard encoder writes, and nothing orjson refuses is lost."""

import json
import math

import pytest

from assay.jsonio import pretty_json

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
