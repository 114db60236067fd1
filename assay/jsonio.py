"""Readable JSON documents, written fast; JSON from users, read strictly.

Every document a run writes (results, lab, report data, store copies) is indented for the people who open it.
The standard library's encoder falls back to pure Python as soon as ``indent`` is set: at 1,000 cases that
was about 0.7 s of every evaluate command (each document written to the export folder and to the store).
orjson writes the same layout (two-space indent, ``": "`` and ``","`` separators, UTF-8 kept as is) in a
twentieth of the time; two spellings differ: exponents (``1e-7`` for ``1e-07``, the same number) and NaN,
which is not JSON, written as ``null``. What orjson refuses (integers beyond 64 bits, strings with lone
surrogates, keys that are not strings) goes through the standard encoder, so no document is lost.

Every JSON document a user gives Assay (suites, labs, host and judge files, answers in JSONL, approvals,
guardrail configurations) is parsed by `strict_loads`, which refuses the two things ``json.loads`` accepts
silently and that lose data later: a repeated key and a lone surrogate.
"""

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson


def pretty_json(document: Any, *, sort_keys: bool = False, default: Callable[[Any], Any] | None = None) -> str:
    """``document`` as indented JSON text ending in a newline, as ``json.dumps(indent=2, ensure_ascii=False)``."""
    option = orjson.OPT_INDENT_2 | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(document, default=default, option=option).decode("utf-8") + "\n"
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=sort_keys, default=default) + "\n"


class JSONInputError(ValueError):
    """A JSON document that parses but would lose or corrupt data: a repeated key, a lone surrogate.

    ``line`` and ``column`` count from 1 (lines from ``first_line`` of `strict_loads`); ``where`` is the JSON
    path of the object or field (``tests[0].test_cases[2]``), empty at the top level.
    """

    def __init__(self, line: int, column: int, where: str, message: str) -> None:
        self.line = line
        self.column = column
        self.where = where
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(part for part in (f"line {self.line} column {self.column}", self.where, self.message) if part)

    def __reduce__(self) -> tuple[type["JSONInputError"], tuple[int, int, str, str]]:
        return (JSONInputError, (self.line, self.column, self.where, self.message))


class _RepeatedKey(Exception):
    """Raised inside the parser at the first object with a repeated key, to stop it and go find where."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _RepeatedKey
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""Cheap test for text that may hold an escaped surrogate (a search for a literal runs at memory speed)."""
_ESCAPE_OR_SURROGATE = re.compile(
    r"\\\\"  # an escaped backslash, consumed so that the "u" after it is not read as an escape
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a pair: one character beyond U+FFFF
    r"|(?P<lone>\\u[dD][89a-fA-F][0-9a-fA-F]{2}|[\ud800-\udfff])"
)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]')
"""A JSON string, a bracket or a comma: all the structure needed to know where a key or a value sits."""
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _has_lone_surrogate(text: str) -> bool:
    if not text.isascii():  # a flag of the string, free; JSON written with ensure_ascii is ASCII
        try:
            text.encode("utf-8")  # a raw surrogate cannot be encoded (text decoded from a file has none)
        except UnicodeEncodeError:
            return True
    if not _SURROGATE_ESCAPE.search(text):
        return False
    return any(match.group("lone") for match in _ESCAPE_OR_SURROGATE.finditer(text))


class _NotANumber(Exception):
    """Raised inside the parser at NaN, Infinity or -Infinity, which Python reads and JSON does not have."""


def _not_a_number(constant: str) -> Any:
    raise _NotANumber(constant)


def _finite(number: str) -> float:
    """A JSON number too large for a float (1e999) would be read as infinity: refused like Infinity."""
    value = float(number)
    if math.isinf(value):
        raise _NotANumber(number)
    return value


_STRING = r'"(?:[^"\\]|\\.)*"'


def _constant_at(text: str, first_line: int, constant: str) -> JSONInputError:
    """Where the first ``constant`` outside a string is (NaN, Infinity, or a number too large for a float): a
    value no JSON writer emits, and one that turns into the id "nan" or a score that compares false with
    everything."""
    found = re.compile(f"{_STRING}|(?P<constant>{re.escape(constant)})")
    offset = next((match.start() for match in found.finditer(text) if match["constant"]), 0)
    line = text.count("\n", 0, offset) + first_line
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    where = _path_at(text, offset)
    if constant in ("NaN", "Infinity", "-Infinity"):
        message = f"{constant} is not a JSON value: write a number, or null when there is none"
    else:
        message = f"{constant} is not a finite number (too large for a float): write a number, or null"
    return JSONInputError(line, column, where, message)


def _structure(stack: list["_Container"], token: str) -> bool:
    """Follow a bracket or comma (True); False for a string token, which the caller reads."""
    inner = stack[-1] if stack else None
    if token in "{[":
        stack.append(_Container(inner.child() if inner else [], {} if token == "{" else None))
    elif token in "}]":
        stack.pop()
    elif token == ",":
        if inner is not None and inner.keys is not None:
            inner.expecting_key = True
        elif inner is not None:
            inner.index += 1
    else:
        return False
    return True


def _path_at(text: str, offset: int) -> str:
    """The JSON path of the value at ``offset`` (a number, which no token of ``_TOKEN`` covers)."""
    stack: list[_Container] = []
    for match in _TOKEN.finditer(text):
        if match.start() > offset:
            break
        token, inner = match.group(), stack[-1] if stack else None
        if _structure(stack, token):
            continue
        if inner is not None and inner.keys is not None and inner.expecting_key:
            try:
                inner.key, inner.expecting_key = json.loads(token), False
            except ValueError:
                return ""
    return _path(stack[-1].child()) if stack else ""


def strict_loads(text: str, *, first_line: int = 1) -> Any:
    """Parse JSON text that Assay reads from a user, refusing what ``json.loads`` would quietly accept.

    A repeated key keeps only its last value (a second ``"tests"`` replaces every test case before it), NaN and
    Infinity are not JSON (Python reads them; ``"id": NaN`` would become the id "nan"), and a
    lone surrogate (``"\\ud800"``) is not a character: it passes validation and fails later, when the text is
    encoded, with an error naming nothing. Both raise `JSONInputError` naming the line, column and path of
    the first one. The check costs one Python call per object while parsing; the position is only searched
    for (a second pass over the text) when there is something to report. ``first_line`` is the line of the
    text in its file (a JSONL record). Syntax errors are ``json.JSONDecodeError`` as usual.
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_not_a_number, parse_float=_finite)
    except _RepeatedKey:
        raise _located(text, first_line) from None
    except _NotANumber as constant:
        raise _constant_at(text, first_line, str(constant)) from None
    if _has_lone_surrogate(text):
        raise _located(text, first_line)
    return value


def not_a_character(what: str, surrogate: str) -> str:
    """The message for text holding a lone surrogate, which no file, page or database can store."""
    return (
        f"{what} holds a lone surrogate ({surrogate}), which is not a character: remove it (a character beyond "
        "U+FFFF is written as a pair, e.g. \\ud83d\\ude00)"
    )


def _located(text: str, first_line: int) -> JSONInputError:
    offset, where, message = _first_problem(text, first_line) or (0, "", "a repeated key or a lone surrogate")
    line = text.count("\n", 0, offset) + first_line
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return JSONInputError(line, column, where, message)


def _path(parts: list[str | int]) -> str:
    rendered = ""
    for part in parts:
        rendered += f"[{part}]" if isinstance(part, int) else (f".{part}" if rendered else part)
    return rendered


@dataclass
class _Container:
    path: list[str | int]
    keys: dict[str, int] | None  # None for a list; for an object, each key read so far and its offset
    expecting_key: bool = True
    key: str = ""
    index: int = 0

    def child(self) -> list[str | int]:
        return [*self.path, self.key if self.keys is not None else self.index]


def _first_problem(text: str, first_line: int) -> tuple[int, str, str] | None:
    """(offset, JSON path, message) of the first repeated key or lone surrogate in ``text``, in reading order."""
    stack: list[_Container] = []
    for match in _TOKEN.finditer(text):
        token, offset = match.group(), match.start()
        inner = stack[-1] if stack else None
        if not _structure(stack, token):
            try:
                string = json.loads(token)
            except ValueError:
                return None  # beyond the valid part of the document
            keys = inner.keys if inner is not None and inner.expecting_key else None  # not None: a key
            if surrogate := lone_surrogate(string):
                where = "" if inner is None else _path(inner.path if keys is not None else inner.child())
                at = next((found.start() for found in _ESCAPE_OR_SURROGATE.finditer(token) if found["lone"]), 0)
                return offset + at, where, not_a_character("a string" if keys is None else "a key", surrogate)
            if inner is not None and keys is not None:
                if string in keys:
                    first = text.count("\n", 0, keys[string]) + first_line
                    message = (
                        f"the key {string!r} is repeated (first on line {first}); JSON keeps only the last value "
                        "and would silently drop the first: remove or rename one"
                    )
                    return offset, _path(inner.path), message
                keys[string] = offset
                inner.key, inner.expecting_key = string, False
    return None


def lone_surrogate(string: str) -> str | None:
    """The first lone surrogate in a decoded ``string`` as its escape (``\\ud800``); None when it has none."""
    found = _LONE_SURROGATE.search(string)
    return f"\\u{ord(found.group()):04x}" if found else None
