"""The checks behind the ``assertions`` evaluator (seed 004, Prompt Foundry), kept apart from its metadata.

Everything here is pure: a response value (or values), the case's tool calls, or a number go in; a bool comes
out, and the ``describe_*`` functions say in one short line what was observed, for a reviewer. Anything that
makes an assertion impossible to check on a case (an undefined template variable, a JSON path that does not
parse, a metric the host did not report) raises ``AssertionProblem`` so the evaluator can leave the case
unscored with the reason, instead of counting a failure it never observed.

Comparison rules, in one place:

- Strings compare as text; surrounding whitespace of the response is not significant for EXACT_MATCH,
  leading whitespace not for STARTS_WITH. ``ignore_case`` compares case-folded text.
- A value selected by a JSON path that is not a string compares by its JSON text (``true``, ``null``,
  ``3.25``, ``{"a": 1}``); a number also equals a target that parses as the same number (``"3.250"``).
- A JSON path may select several values (``$.items[*].name``): EXACT_MATCH and STARTS_WITH hold when any
  value matches, CONTAINS_ALL when every target is found in some value, CONTAINS_ANY when any target is.
  A path that selects nothing makes the (un-negated) assertion fail.
- Tool-call arguments match when the expected ones are a subset of the actual ones: nested objects are
  subsets too, lists compare element by element, and scalars use the equality rule above.
- TOOL_CALLED_IN_ORDER (an Assay extension) holds when its tool names occur among the calls' names as a
  subsequence: in that relative order, other calls in between allowed, a name listed twice needing two calls.

JSON paths are the suite author's and documents the model's, so neither may hang or crash the run: a path is
at most ``MAX_JSON_PATH_CHARS`` long, its ``=~`` filters and ``sub()`` run on ``assay.bounded_regex`` (see
``_json_paths``), and a document nested too deeply for Python is a problem on that case, never a crash.
"""

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import regex

from assay.bounded_regex import PatternError
from assay.models import ToolCall

PREVIEW_CHARS = 60
MAX_JSON_PATH_CHARS = 1_000
TEMPLATE = regex.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")
_FENCE = regex.compile(r"^\s*```[A-Za-z]*[ \t]*\n?(.*?)\n?```\s*$", regex.DOTALL)


class AssertionProblem(ValueError):
    """An assertion that cannot be checked on this case; the message says what is wrong."""


def fill_template(text: str, variables: dict[str, str]) -> str:
    """``{{name}}`` placeholders replaced by case variables; an undefined one is an error, never left as is.

    A plain substitution rather than a template engine: targets are literal text that may well contain
    ``{%`` or ``{#``, which must not be read as template syntax.
    """

    def replace(match: regex.Match) -> str:
        name = match.group(1)
        if name not in variables:
            known = ", ".join(sorted(variables)) or "none"
            raise AssertionProblem(f"undefined variable {name!r} in {text!r} (case variables: {known})")
        return variables[name]

    return TEMPLATE.sub(replace, text)


def fill_arguments(value: Any, variables: dict[str, str]) -> Any:
    """Templates filled in every string of an expected-arguments structure."""
    if isinstance(value, str):
        return fill_template(value, variables)
    if isinstance(value, dict):
        return {key: fill_arguments(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [fill_arguments(item, variables) for item in value]
    return value


def strip_fences(text: str) -> str:
    """The body of a Markdown code fence (```json ... ```), or the text itself when it is not fenced."""
    fenced = _FENCE.match(text)
    return fenced.group(1) if fenced else text


def parse_json(text: str) -> tuple[bool, Any]:
    """(True, document) when the fence-stripped text is JSON, else (False, None); ``AssertionProblem`` when
    it nests too deeply for Python's parser (it may be valid JSON, so it is not counted as invalid)."""
    try:
        return True, json.loads(strip_fences(text))
    except json.JSONDecodeError:
        return False, None
    except RecursionError as error:
        raise AssertionProblem("the answer nests too deeply to parse as JSON") from error


@lru_cache(maxsize=256)
def compile_path(path: str) -> Any:
    """A parsed JSON path (jsonpath-ng's extended syntax, so filters like ``[?(@.n > 1)]`` work), with its
    regexes on the bounded engine."""
    from assay.evaluators._json_paths import parse_bounded
    from jsonpath_ng.exceptions import JSONPathError

    if len(path) > MAX_JSON_PATH_CHARS:
        raise AssertionProblem(
            f"json_path {preview(path)} is {len(path)} characters long; the limit is {MAX_JSON_PATH_CHARS}"
        )
    try:
        return parse_bounded(path)
    except (JSONPathError, ValueError, TypeError) as error:  # PatternError is a ValueError
        raise AssertionProblem(f"json_path {path!r} does not parse: {error}") from error
    except RecursionError as error:
        raise AssertionProblem(f"json_path {preview(path)} nests too deeply to parse") from error


def select(path: str, document: Any) -> list[Any]:
    """Every value the path selects in the document, in document order."""
    from jsonpath_ng.exceptions import JSONPathError

    parsed = compile_path(path)
    try:
        return [match.value for match in parsed.find(document)]
    except (JSONPathError, PatternError, ValueError, TypeError) as error:
        raise AssertionProblem(f"json_path {path!r} cannot be applied to the response: {error}") from error
    except RecursionError as error:
        raise AssertionProblem(f"json_path {path!r} cannot be applied: the response nests too deeply") from error
    except NotImplementedError as error:  # jsonpath-ng parses some operators it cannot evaluate, e.g. `a & b`
        raise AssertionProblem(f"json_path {path!r} uses an operator that is not supported (such as '&')") from error


def as_text(value: Any) -> str:
    """Strings as themselves; anything else by its JSON text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric(value: Any) -> float | None:
    """A number's value, or the value of numeric text; None for anything else."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _folder(ignore_case: bool) -> Callable[[str], str]:
    return str.casefold if ignore_case else str


def scalars_equal(actual: Any, expected: Any, ignore_case: bool) -> bool:
    """Equality across JSON types: when either side is a number, by numeric value (so ``250`` equals
    ``"250.0"``); otherwise by text, so ``true`` equals ``"true"`` but never ``1``."""
    if _is_number(actual) or _is_number(expected):
        left, right = _numeric(actual), _numeric(expected)
        if left is not None and right is not None:
            return left == right
    fold = _folder(ignore_case)
    return fold(as_text(actual)) == fold(as_text(expected))


def text_holds(kind: str, values: Sequence[Any], targets: Sequence[str], ignore_case: bool) -> bool:
    """Whether EXACT_MATCH / STARTS_WITH / CONTAINS_ALL / CONTAINS_ANY holds for the selected values."""
    fold = _folder(ignore_case)
    texts = [fold(as_text(value)) for value in values]
    if kind == "EXACT_MATCH":
        target = targets[0].strip()
        return any(scalars_equal(v.strip() if isinstance(v, str) else v, target, ignore_case) for v in values)
    if kind == "STARTS_WITH":
        prefix = fold(targets[0].lstrip())
        return any(text.lstrip().startswith(prefix) for text in texts)
    found = [any(fold(target) in text for text in texts) for target in targets]
    if kind == "CONTAINS_ALL":
        return all(found)
    if kind == "CONTAINS_ANY":
        return any(found)
    raise AssertionProblem(f"{kind} is not a text assertion")


def arguments_include(actual: Any, expected: Any, ignore_case: bool) -> bool:
    """Whether ``expected`` is a subset of ``actual`` (objects by key, lists element by element)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and arguments_include(actual[key], value, ignore_case) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(arguments_include(a, e, ignore_case) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(actual, dict | list):
        return False
    return scalars_equal(actual, expected, ignore_case)


def tool_called(calls: Sequence[ToolCall], name: str, arguments: dict[str, Any] | None, ignore_case: bool) -> bool:
    """Whether some call is to ``name`` and, when ``arguments`` is given, includes those arguments."""
    fold = _folder(ignore_case)
    return any(
        fold(call.name.strip()) == fold(name.strip())
        and (arguments is None or arguments_include(call.arguments, arguments, ignore_case))
        for call in calls
    )


def _same_tool(ignore_case: bool) -> Callable[[ToolCall, str], bool]:
    fold = _folder(ignore_case)
    return lambda call, name: fold(call.name.strip()) == fold(name.strip())


def unmatched_in_order(calls: Sequence[ToolCall], names: Sequence[str], ignore_case: bool) -> int | None:
    """Index of the first of ``names`` not called after the calls matched to the names before it (each name
    takes the earliest call it can), or None when every name is called in that order."""
    same = _same_tool(ignore_case)
    position = 0
    for index, name in enumerate(names):
        position = next((at + 1 for at in range(position, len(calls)) if same(calls[at], name)), -1)
        if position < 0:
            return index
    return None


def describe_tool_order(calls: Sequence[ToolCall], names: Sequence[str], ignore_case: bool) -> str:
    """Which tool broke the order (never called, or not after the one before it), or that the order held."""
    made = _listed([call.name for call in calls], limit=6) or "none"
    missing = unmatched_in_order(calls, names, ignore_case)
    if missing is None:
        return f"{_listed(names, limit=6)} called in that order"
    name = names[missing]
    if not any(_same_tool(ignore_case)(call, name) for call in calls):
        return f"no call to {preview(name)} (calls: {made})"
    return f"no call to {preview(name)} after {preview(names[missing - 1])} (calls: {made})"


def preview(value: Any) -> str:
    """A value quoted for a reason line, cut to ``PREVIEW_CHARS`` so a long answer stays a short reason."""
    text = as_text(value)
    return repr(text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 3] + "...")


def _listed(items: Sequence[Any], limit: int = 3) -> str:
    shown = ", ".join(preview(item) for item in items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def describe_text(kind: str, values: Sequence[Any], targets: Sequence[str], ignore_case: bool, where: str) -> str:
    """What a text assertion observed at ``where`` (the answer, a JSON path, a turn), whichever way it went."""
    if not values:
        return f"{where} selects nothing"
    if kind == "EXACT_MATCH":
        verdict = "equals" if text_holds(kind, values, targets, ignore_case) else "does not equal"
        return f"{where} ({_listed(values)}) {verdict} {preview(targets[0])}"
    if kind == "STARTS_WITH":
        verdict = "starts" if text_holds(kind, values, targets, ignore_case) else "does not start"
        return f"{where} ({_listed(values)}) {verdict} with {preview(targets[0])}"
    found = [target for target in targets if text_holds("CONTAINS_ANY", values, [target], ignore_case)]
    if kind == "CONTAINS_ALL" and len(found) < len(targets):
        return f"{where} lacks {_listed([target for target in targets if target not in found])}"
    return f"{where} contains {_listed(found)}" if found else f"{where} contains none of {_listed(targets)}"


def describe_tool_call(calls: Sequence[ToolCall], name: str, arguments: dict[str, Any] | None, holds: bool) -> str:
    with_arguments = " with the expected arguments" if arguments is not None else ""
    if holds:
        return f"{preview(name)} was called{with_arguments}"
    made = _listed([call.name for call in calls]) or "none"
    return f"no call to {preview(name)}{with_arguments} (calls: {made})"
