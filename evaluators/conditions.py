"""The text-matching condition language of the reference manual.

    "15,969" AND regexp("15,?969 [Mm]illion") AND NOT ("Real" OR "real")

Operands are double-quoted strings (substring match, case-sensitive) or ``regexp("...")``; operators are
NOT > AND > OR by precedence, parentheses group. Inside quotes ``\\"`` is a quote; in plain strings ``\\\\``
is a backslash, while regexp strings keep every other backslash for the regex engine. User regexes go
through ``assay.bounded_regex``: bounded at compile time (so ``a{1000000000}`` cannot exhaust memory) and under
a timeout when matching (so a catastrophically backtracking pattern cannot hang a run). Parentheses and NOT
may nest ``MAX_NESTING`` deep, so a hostile condition is a parse error, never a stack overflow.
"""

from dataclasses import dataclass
from functools import lru_cache

import regex

from assay import bounded_regex

MAX_NESTING = 100
_KEYWORD = regex.compile(r"[A-Za-z]+")


class ConditionError(ValueError):
    """A condition that cannot be parsed, compiled or evaluated in time."""


@dataclass(frozen=True)
class Literal:
    text: str

    def matches(self, haystack: str) -> bool:
        return self.text in haystack


@dataclass(frozen=True)
class Pattern:
    source: str

    def matches(self, haystack: str) -> bool:
        try:
            return bounded_regex.search(self.source, haystack) is not None
        except bounded_regex.PatternError as error:
            raise ConditionError(f"regexp: {error}") from error


@dataclass(frozen=True)
class Not:
    operand: "Node"

    def matches(self, haystack: str) -> bool:
        return not self.operand.matches(haystack)


@dataclass(frozen=True)
class And:
    operands: tuple["Node", ...]

    def matches(self, haystack: str) -> bool:
        return all(operand.matches(haystack) for operand in self.operands)


@dataclass(frozen=True)
class Or:
    operands: tuple["Node", ...]

    def matches(self, haystack: str) -> bool:
        return any(operand.matches(haystack) for operand in self.operands)


Node = Literal | Pattern | Not | And | Or

_KEYWORDS = {"AND", "OR", "NOT"}


def _tokenize(condition: str) -> list[tuple[str, str, int]]:
    """(kind, value, position) tokens; kinds: str, regexp, op, lparen, rparen."""
    tokens: list[tuple[str, str, int]] = []
    position = 0
    while position < len(condition):
        char = condition[position]
        if char.isspace():
            position += 1
        elif char in "()":
            tokens.append(("lparen" if char == "(" else "rparen", char, position))
            position += 1
        elif char == '"':
            raw, position = _read_quoted(condition, position)
            tokens.append(("str", raw, position))
        elif condition.startswith("regexp", position):
            start = position
            position += len("regexp")
            while position < len(condition) and condition[position].isspace():
                position += 1
            if not condition.startswith('("', position):
                raise ConditionError(f'expected regexp("...") at position {start}')
            raw, position = _read_quoted(condition, position + 1)
            if not condition.startswith(")", position):
                raise ConditionError(f"expected ')' closing regexp at position {position}")
            tokens.append(("regexp", raw, start))
            position += 1
        else:
            word = _KEYWORD.match(condition, position)
            if word and word.group(0) in _KEYWORDS:
                tokens.append(("op", word.group(0), position))
                position += len(word.group(0))
            else:
                snippet = condition[position : position + 12]
                raise ConditionError(
                    f"unexpected {snippet!r} at position {position}: expected a quoted string, "
                    'regexp("..."), AND, OR, NOT or parentheses'
                )
    return tokens


def _read_quoted(condition: str, start: int) -> tuple[str, int]:
    """Raw text between the quote at ``start`` and its closing quote; returns it and the index after."""
    position = start + 1
    raw: list[str] = []
    while position < len(condition):
        char = condition[position]
        if char == "\\" and position + 1 < len(condition):
            raw.append(condition[position : position + 2])
            position += 2
            continue
        if char == '"':
            return "".join(raw), position + 1
        raw.append(char)
        position += 1
    raise ConditionError(f"unterminated string starting at position {start}")


def _unescape_literal(raw: str) -> str:
    return regex.sub(r"\\(.)", r"\1", raw)


class _Parser:
    """Recursive descent; ``depth`` counts the open parentheses and NOTs so nesting stays under ``MAX_NESTING``."""

    def __init__(self, tokens: list[tuple[str, str, int]]) -> None:
        self.tokens = tokens
        self.index = 0
        self.depth = 0

    def enter(self, position: int) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ConditionError(
                f"condition nests parentheses and NOT deeper than {MAX_NESTING} levels (at position {position})"
            )

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise ConditionError("condition ends too early: expected an operand")
        self.index += 1
        return token

    def parse(self) -> Node:
        node = self.parse_or()
        leftover = self.peek()
        if leftover is not None:
            raise ConditionError(f"unexpected {leftover[1]!r} at position {leftover[2]}")
        return node

    def parse_or(self) -> Node:
        operands = [self.parse_and()]
        while (token := self.peek()) and token[:2] == ("op", "OR"):
            self.take()
            operands.append(self.parse_and())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def parse_and(self) -> Node:
        operands = [self.parse_not()]
        while (token := self.peek()) and token[:2] == ("op", "AND"):
            self.take()
            operands.append(self.parse_not())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def parse_not(self) -> Node:
        token = self.peek()
        if token and token[:2] == ("op", "NOT"):
            self.take()
            self.enter(token[2])
            operand = self.parse_not()
            self.depth -= 1
            return Not(operand)
        return self.parse_atom()

    def parse_atom(self) -> Node:
        kind, value, position = self.take()
        if kind == "str":
            return Literal(_unescape_literal(value))
        if kind == "regexp":
            source = value.replace('\\"', '"')
            try:
                bounded_regex.compile_pattern(source)
            except bounded_regex.InvalidPattern as error:
                raise ConditionError(f"invalid regexp at position {position}: {error}") from error
            except bounded_regex.PatternError as error:
                raise ConditionError(f"unsafe regexp at position {position}: {error}") from error
            return Pattern(source)
        if kind == "lparen":
            self.enter(position)
            node = self.parse_or()
            self.depth -= 1
            closing = self.peek()
            if closing is None or closing[0] != "rparen":
                where = "at the end" if closing is None else f"at position {closing[2]}"
                raise ConditionError(f"expected ')' closing the '(' at position {position}, {where}")
            self.take()
            return node
        raise ConditionError(f"unexpected {value!r} at position {position}: expected an operand")


@lru_cache(maxsize=4096)
def parse_condition(condition: str) -> Node:
    """Parse once per distinct condition; raises ``ConditionError`` naming the position at fault."""
    if not condition.strip():
        raise ConditionError("empty condition")
    try:
        return _Parser(_tokenize(condition)).parse()
    except RecursionError as error:  # a last resort: MAX_NESTING keeps ordinary stacks well clear of this
        raise ConditionError(f"condition nests too deeply to parse (limit {MAX_NESTING} levels)") from error
