"""The one engine for regular expressions written by users: conditions, JSON Schema patterns, JSON paths.

A user pattern can hurt twice. Compiling ``a{1000000000}`` unrolls the repeat and grows the process until the
kernel kills it (the whole lab is lost), and matching ``(a+)+$`` backtracks for hours. So every user pattern is
checked before it is compiled (length, counted repeats, the expansion that nested repeats multiply out to,
nesting depth), compiled under a guard that turns any engine failure into ``PatternError``, and matched with
the ``regex`` package's ``timeout``. Patterns built into Assay do not come here.

The pre-compile check reads the pattern text itself (escapes, character classes, groups, verbose comments);
where the dialect leaves the reading open, it errs towards counting more, never less.
"""

from dataclasses import dataclass, field
from functools import lru_cache

import regex

REGEX_TIMEOUT_S = 1.0
MAX_PATTERN_CHARS = 5_000
MAX_REPEAT = 1_000
MAX_EXPANSION = 100_000
MAX_GROUP_DEPTH = 100
SHOWN_PATTERN_CHARS = 80

_COUNTED_REPEAT = regex.compile(r"\{(\d*)(?:,(\d*))?\}")
_INLINE_FLAGS = regex.compile(r"\(\?([a-zA-Z01]*)(?:-([a-zA-Z01]*))?([:)])")
_MAX_COUNT_DIGITS = len(str(MAX_REPEAT))


class PatternError(ValueError):
    """A user pattern that cannot be used; the message names the pattern and what is wrong with it."""


class InvalidPattern(PatternError):
    """The pattern is not a regular expression (a syntax error)."""


class UnsafePattern(PatternError):
    """The pattern is over a limit: compiling it could exhaust memory or the stack."""


class PatternTimeout(PatternError):
    """Matching ran past ``REGEX_TIMEOUT_S`` (catastrophic backtracking); the caller records it, never waits."""


def shown(pattern: str) -> str:
    """The pattern quoted for a one-line message, cut so a 5,000-character pattern stays a short line."""
    if len(pattern) <= SHOWN_PATTERN_CHARS:
        return repr(pattern)
    return repr(pattern[: SHOWN_PATTERN_CHARS - 3] + "...")


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, flags: int = 0) -> regex.Pattern:
    """The compiled pattern, once it is known to be cheap to compile; ``PatternError`` otherwise."""
    check_limits(pattern, flags)
    try:
        return regex.compile(pattern, flags)
    except regex.error as error:
        raise InvalidPattern(f"regex {shown(pattern)} is invalid: {error}") from error
    except (RecursionError, MemoryError, OverflowError, ValueError) as error:
        raise UnsafePattern(f"regex {shown(pattern)} cannot be compiled safely: {type(error).__name__}") from error


def search(pattern: str, text: str, flags: int = 0) -> regex.Match | None:
    """``regex.search`` on a user pattern, bounded in compile cost and in time (``PatternTimeout``)."""
    compiled = compile_pattern(pattern, flags)
    try:
        return compiled.search(text, timeout=REGEX_TIMEOUT_S)
    except TimeoutError as error:
        raise _timeout(pattern, text) from error


def sub(pattern: str, replacement: str, text: str, flags: int = 0) -> str:
    """``regex.sub`` on a user pattern, bounded like ``search``; a bad replacement is an ``InvalidPattern``."""
    compiled = compile_pattern(pattern, flags)
    try:
        return compiled.sub(replacement, text, timeout=REGEX_TIMEOUT_S)
    except TimeoutError as error:
        raise _timeout(pattern, text) from error
    except (regex.error, IndexError) as error:
        raise InvalidPattern(f"replacement {replacement!r} for regex {shown(pattern)} is invalid: {error}") from error


def _timeout(pattern: str, text: str) -> PatternTimeout:
    return PatternTimeout(
        f"regex {shown(pattern)} took longer than {REGEX_TIMEOUT_S:g}s on a {len(text)}-character text "
        "(catastrophic backtracking?)"
    )


def check_limits(pattern: str, flags: int = 0) -> None:
    """``UnsafePattern`` when the pattern is too long, repeats a count above ``MAX_REPEAT``, nests groups
    deeper than ``MAX_GROUP_DEPTH`` or multiplies out to more than ``MAX_EXPANSION`` elements.

    Whether the pattern is verbose (``#`` comments, ignored spaces) can hinge on an inline ``(?x)`` that the
    ``regex`` package applies to the whole pattern, so the pattern is read both ways and must pass both.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsafePattern(
            f"regex {shown(pattern)} is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}"
        )
    _Scan(pattern, verbose=False).run()
    if flags & regex.VERBOSE or "x" in pattern:
        _Scan(pattern, verbose=True).run()


@dataclass
class _Group:
    """A group being read: its expansion so far, that of its last element (what a repeat multiplies) and
    whether verbose mode is on inside it."""

    verbose: bool
    expansion: int = 0
    last: int = 0

    def add(self, expansion: int) -> None:
        self.expansion += expansion
        self.last = expansion


@dataclass
class _Scan:
    """One left-to-right reading of a pattern, counting how many elements compiling it would produce."""

    pattern: str
    verbose: bool
    groups: list[_Group] = field(default_factory=list)
    position: int = 0

    def run(self) -> None:
        self.groups = [_Group(self.verbose)]
        while self.position < len(self.pattern):
            self.step()
        self.check_expansion(sum(group.expansion for group in self.groups))

    def step(self) -> None:
        pattern, position, group = self.pattern, self.position, self.groups[-1]
        char = pattern[position]
        self.position += 1
        if char == "\\":
            self.position += 1
            group.add(1)
        elif char == "[":
            self.position = _class_end(pattern, position)
            group.add(1)
        elif char == "(":
            self.open_group(position)
        elif char == ")":
            self.close_group()
        elif char == "{" and (repeat := _COUNTED_REPEAT.match(pattern, position)) and any(repeat.groups()):
            self.position = repeat.end()
            self.repeat(repeat)
        elif char == "|":
            group.last = 0
        elif group.verbose and char == "#":
            newline = pattern.find("\n", position)
            self.position = len(pattern) if newline < 0 else newline + 1
        elif char in "*+?" or (group.verbose and char.isspace()):
            return
        else:
            group.add(1)

    def open_group(self, position: int) -> None:
        if self.pattern.startswith("(?#", position):
            end = self.pattern.find(")", position)
            self.position = len(self.pattern) if end < 0 else end + 1
            return
        verbose = self.groups[-1].verbose
        flags = _INLINE_FLAGS.match(self.pattern, position)
        if flags:
            turned_on, turned_off, closer = flags.groups()
            verbose = (verbose or "x" in turned_on) and "x" not in (turned_off or "")
            if closer == ")":
                self.groups[-1].verbose = verbose
                self.position = flags.end()
                return
        self.groups.append(_Group(verbose))
        if len(self.groups) > MAX_GROUP_DEPTH + 1:
            raise UnsafePattern(
                f"regex {shown(self.pattern)} nests groups deeper than {MAX_GROUP_DEPTH} (at position {position})"
            )

    def close_group(self) -> None:
        if len(self.groups) == 1:  # an unbalanced ')': the engine reports it
            self.groups[0].add(1)
            return
        closed = self.groups.pop()
        self.groups[-1].add(closed.expansion)

    def repeat(self, repeat: regex.Match) -> None:
        counts = [digits for digits in repeat.groups() if digits]
        if any(len(digits) > _MAX_COUNT_DIGITS or int(digits) > MAX_REPEAT for digits in counts):
            raise UnsafePattern(
                f"regex {shown(self.pattern)} has the counted repeat {repeat.group(0)} at position "
                f"{repeat.start()}; counts above {MAX_REPEAT} are refused"
            )
        times = max(int(digits) for digits in counts)
        group = self.groups[-1]
        group.expansion += group.last * (times - 1)
        group.last *= times
        self.check_expansion(group.expansion)

    def check_expansion(self, expansion: int) -> None:
        if expansion > MAX_EXPANSION:
            raise UnsafePattern(
                f"regex {shown(self.pattern)} multiplies out to more than {MAX_EXPANSION} elements "
                "(nested counted repeats); write it with fewer or smaller counts"
            )


def _class_end(pattern: str, start: int) -> int:
    """The index after the ``]`` closing the character class opened at ``start`` (a ``]`` right after ``[`` or
    ``[^`` is a member); the end of the pattern when it is unclosed, which the engine then reports."""
    position = start + 1
    if pattern.startswith("^", position):
        position += 1
    if pattern.startswith("]", position):
        position += 1
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
            continue
        if char == "]":
            return position + 1
        position += 1
    return len(pattern)
