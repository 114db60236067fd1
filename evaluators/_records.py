"""Structured evidence (a JSON record, a CSV table) read as statements, not as text.

Assistants answer from business records and tool outputs: ``{"name": "Luigi's", "attributes":
{"RestaurantsDelivery": "False"}, "hours": {"Monday": "16:0-21:0"}}``. Read as text, the key ``delivery`` is a
word the context uses, so "Luigi's offers delivery" looked supported, and a list of reviews flattened to words
lost which author said what. Here a record becomes one statement per value that keeps its key path
("attributes restaurants delivery: no", "hours monday: 16:0-21:0"), one per list item for lists of records (the
item's values stay together, so who said what stays together), and every key whose value is false, null,
zero or empty is an *absent* feature: a claim that mentions it without a negation is contradicted by the record
(``contradicted``), while "does not offer delivery" is supported by the statement "delivery: no".
"""

import csv
import io
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex
from assay.evaluators._grounding import _stem, content_words

MAX_RECORD_CHARS = 200_000
"""Longer texts are read as text: a record that large is not a record an answer is written from."""
_FALSE = frozenset(
    {"false", "no", "none", "null", "n/a", "na", "0", "", "u'no'", "'no'", "u'none'", "'none'", "[]", "{}"}
)
_TRUE = frozenset({"true", "yes", "u'yes'", "'yes'"})
_NEGATION = regex.compile(
    r"\b(?:not|no|never|none|without|lacks?|lacking|neither|nor|cannot|unavailable|doesn't|don't|isn't|aren't"
    r"|wasn't|weren't|won't|can't|hasn't|haven't|didn't)\b|n't\b",
    regex.I,
)
_CAMEL = regex.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-.]+")


@dataclass(frozen=True)
class Absent:
    """A key whose value says the feature is not there (false, null, zero, empty): ``words`` are the stems of
    its last key, which a claim must mention to be about it."""

    path: str
    value: str
    words: frozenset[str]


@dataclass(frozen=True)
class Record:
    statements: tuple[str, ...]
    absent: tuple[Absent, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.statements)


def _key_words(key: str) -> str:
    """Key names as words: "RestaurantsDelivery" -> "restaurants delivery"; "WiFi" stays one word."""
    parts: list[str] = []
    for part in filter(None, _CAMEL.split(str(key))):
        if parts and len(part) <= 2 and len(parts[-1]) <= 2:
            parts[-1] += part
        else:
            parts.append(part)
    return " ".join(part.lower() for part in parts)


def _last_word(key: str) -> frozenset[str]:
    """What a claim must mention to be about the key: the stem of its last content word ("delivery")."""
    found = content_words(_key_words(key))
    return frozenset({_stem(found[-1])}) if found else frozenset()


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "not stated"
    text = str(value).strip()
    lowered = text.lower()
    if lowered in _TRUE:
        return "yes"
    if lowered in _FALSE - {"0", ""}:
        return "no" if lowered in {"false", "no", "u'no'", "'no'"} else "not stated"
    return text.strip("'\"").removeprefix("u'").strip("'")


def _is_absent(value: Any) -> bool:
    if isinstance(value, bool):
        return not value
    if value is None or (isinstance(value, int | float) and value == 0):
        return True
    if isinstance(value, list | dict):
        return not value
    return str(value).strip().lower() in _FALSE


def _walk(value: Any, path: list[str], statements: list[str], absent: list[Absent]) -> None:
    if isinstance(value, dict):
        scalars = {key: item for key, item in value.items() if not isinstance(item, dict | list) or not item}
        for key, item in scalars.items():
            where = " ".join([*path, _key_words(key)])
            statements.append(f"{where}: {_scalar(item)}")
            if _is_absent(item):
                absent.append(Absent(where, json.dumps(item), _last_word(key)))
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                _walk(item, [*path, _key_words(key)], statements, absent)
    elif isinstance(value, list):
        for index, item in enumerate(value, 1):
            if isinstance(item, dict) and all(not isinstance(inner, dict | list) for inner in item.values()):
                fields = ", ".join(f"{_key_words(key)} {_scalar(inner)}" for key, inner in item.items())
                statements.append(f"{' '.join(path) or 'item'} {index}: {fields}")
            elif isinstance(item, dict | list):
                _walk(item, [*path, str(index)], statements, absent)
            else:
                statements.append(f"{' '.join(path) or 'item'}: {_scalar(item)}")


def _json_record(text: str) -> Record | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict | list) or not value:
        return None
    statements: list[str] = []
    absent: list[Absent] = []
    _walk(value, [], statements, absent)
    return Record(tuple(statements), tuple(absent))


def _csv_record(text: str) -> Record | None:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    try:
        dialect = csv.Sniffer().sniff(lines[0], delimiters=",\t;|")
    except csv.Error:
        return None
    rows = list(csv.reader(io.StringIO("\n".join(lines)), dialect))
    width = len(rows[0])
    if width < 2 or any(len(row) != width for row in rows) or not csv.Sniffer().has_header("\n".join(lines[:20])):
        return None
    header = [_key_words(name) for name in rows[0]]
    records = [dict(zip(header, row, strict=True)) for row in rows[1:]]
    statements = [
        f"{row[header[0]]}: " + ", ".join(f"{key} {_scalar(value)}" for key, value in list(row.items())[1:])
        for row in records
    ]
    absent = [
        Absent(f"{row[header[0]]} {key}", value, _last_word(key))
        for row in records
        for key, value in list(row.items())[1:]
        if _is_absent(value)
    ]
    return Record(tuple(statements), tuple(absent))


@lru_cache(maxsize=4096)
def read_record(text: str) -> Record | None:
    """The record a context text holds (a JSON object or list, a CSV table with a header), or None for prose."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_RECORD_CHARS:
        return None
    if stripped[0] in "{[":
        return _json_record(stripped)
    if "\n" in stripped and stripped.count("\n") < 10_000:
        return _csv_record(stripped)
    return None


def evidence_text(text: str) -> str:
    """The text evidence checks read: a record's statements, else the text itself."""
    record = read_record(text)
    return text if record is None else record.text


def contradicted(claim: str, absent: tuple[Absent, ...], present: frozenset[str]) -> tuple[str, ...]:
    """The absent features ``claim`` asserts without a negation ("offers delivery" where the record says
    ``"delivery": false``), unless other evidence uses the same word (``present``: stems of every statement
    that is not a false/null/zero value, and of prose passages)."""
    if not absent or _NEGATION.search(claim):
        return ()
    stems = {_stem(word) for word in content_words(claim)}
    claimed = [item for item in absent if item.words and item.words <= stems and not item.words <= present]
    return tuple(f"{item.path} = {item.value}" for item in claimed)
