"""Hypothesis strategies for hostile inputs, and the one fuzz budget shared by every property.

Budgets are fixed and examples derandomised so ``make test`` explores the same inputs on every machine; set
``ASSAY_FUZZ_EXAMPLES`` to explore more (bench/reliability.py does, with fresh randomness).
"""

import json
import os
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("ASSAY_FUZZ_EXAMPLES", "120"))
RANDOMISE = os.environ.get("ASSAY_FUZZ_RANDOM") == "1"

FUZZ = settings(
    max_examples=EXAMPLES,
    # Generous: a hang is seconds to hours; a slow CI machine is tens of milliseconds.
    deadline=timedelta(seconds=10),
    derandomize=not RANDOMISE,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=25,
)


def nested(depth: int, opener: str = "[", closer: str = "]") -> str:
    """A JSON text nested ``depth`` levels: deep enough to overflow a recursive parser or validator."""
    return opener * depth + closer * depth


def mutate(document: Any, path: list[int | str], replacement: Any, drop: bool) -> Any:
    """``document`` with the value at a (best-effort) path replaced, or its key/item dropped."""
    if not path or not isinstance(document, dict | list) or not document:
        return replacement
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        keys = sorted(document)
        key = keys[hash(head) % len(keys)] if not isinstance(head, str) or head not in document else head
        copy = dict(document)
        if drop and not rest:
            copy.pop(key)
        else:
            copy[key] = mutate(document[key], rest, replacement, drop)
        return copy
    index = head % len(document) if isinstance(head, int) else 0
    copy = list(document)
    if drop and not rest:
        copy.pop(index)
    else:
        copy[index] = mutate(document[index], rest, replacement, drop)
    return copy


mutation_paths = st.lists(st.integers(min_value=0, max_value=50) | st.text(max_size=8), max_size=6)


def dumps(document: Any) -> str:
    """JSON text as a careless producer might write it: NaN/Infinity tokens allowed."""
    return json.dumps(document, allow_nan=True, ensure_ascii=False)


CONDITION_TOKENS = [
    '"fee"', '"', '""', 'regexp("', '")', "(", ")", " AND ", " OR ", "NOT ", " ", "\\", '\\"',
    "a+", "(a+)+$", "{1000000000}", "{2,}", ".*", "[", "]", "[0-9]+", "\\d", "(?i)", "(?<=x)", "|", "£25",
    "regexp", "AND", "days", "\n", "\x00",
]
JSON_PATH_TOKENS = [
    "$", ".", "..", "[", "]", "*", "[?(", "@", ".name", "=~", '"(a+)+$"', ")]", "0", ":", "-1", "==", ">", "1",
    "name", "'", '"', "items", "[*]", "`this`", "|", "&", " ", "\\", "(", ")", "?", "len", "sorted",
]
REGEX_TOKENS = ["a", "+", "*", "?", "(", ")", "{", "}", "1000000000", ",", "|", "[", "]", "^", "$", "\\", ".", "(?"]


def joined(tokens: list[str], max_size: int = 24) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(tokens), max_size=max_size).map("".join)


answers = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["a" * 31 + "!", "A £25 fee within 30 days.", '{"name": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}']),
    json_values.map(dumps),
)
