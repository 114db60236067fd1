"""promptfoo ``assert`` entries as Assay's deterministic checks, and the rest listed as not mapped.

Mapped (each also in its ``not-`` form, Assay's NOT modifier): ``contains`` / ``icontains`` (CONTAINS_ALL of one
value), ``contains-all`` / ``contains-any`` and their ``i`` forms (a list, or a string split on commas as
promptfoo splits it), ``starts-with`` (STARTS_WITH), ``equals`` with a text value (EXACT_MATCH), ``regex``
(a ``regexp("...")`` term of the case's output condition, checked by the ``text_matching`` evaluator),
``is-json`` (a JSON response; a schema given as its value becomes a constraint the ``json_schema`` evaluator
checks), and ``latency`` / ``cost`` with a threshold (milliseconds become seconds). Values may use
``{{var}}``: Assay fills them from the case's variables, which hold every promptfoo var.

Two comparisons differ slightly: Assay's EXACT_MATCH ignores whitespace around the answer and STARTS_WITH
leading whitespace, where promptfoo compares the raw output. Everything else (model-graded, ``javascript``,
``python``, ``similar``, ``assert-set``, an assertion with a ``transform``...) is listed as not mapped in the
import's notes, never dropped without a word. ``$ref`` entries are resolved inside the file
(``#/assertionTemplates/NAME``).
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

from assay.formats.options import ImportOptions
from assay.formats.prompt_field import var_text
from assay.models import Assertion

_TEXT_TYPES = {
    "contains": ("CONTAINS_ALL", False, False),
    "icontains": ("CONTAINS_ALL", True, False),
    "contains-all": ("CONTAINS_ALL", False, True),
    "icontains-all": ("CONTAINS_ALL", True, True),
    "contains-any": ("CONTAINS_ANY", False, True),
    "icontains-any": ("CONTAINS_ANY", True, True),
    "starts-with": ("STARTS_WITH", False, False),
    "equals": ("EXACT_MATCH", False, False),
}
"""promptfoo type -> (Assay type, ignore case, takes a list of values)."""
_THRESHOLD_TYPES = {"latency": ("LATENCY", 1 / 1000), "cost": ("COST", 1.0)}
"""promptfoo type -> (Assay type, factor from promptfoo's threshold unit to Assay's)."""
_KNOWN_TYPES = sorted(
    [
        "answer-relevance",
        "bleu",
        "classifier",
        "contains",
        "contains-all",
        "contains-any",
        "contains-html",
        "contains-json",
        "contains-sql",
        "contains-xml",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "cost",
        "equals",
        "factuality",
        "finish-reason",
        "g-eval",
        "gleu",
        "guardrails",
        "human",
        "icontains",
        "icontains-all",
        "icontains-any",
        "is-html",
        "is-json",
        "is-refusal",
        "is-sql",
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "is-valid-openai-tools-call",
        "is-xml",
        "javascript",
        "latency",
        "levenshtein",
        "llm-rubric",
        "meteor",
        "model-graded-closedqa",
        "model-graded-factuality",
        "moderation",
        "perplexity",
        "perplexity-score",
        "pi",
        "python",
        "regex",
        "rouge-l",
        "rouge-n",
        "rouge-s",
        "ruby",
        "search-rubric",
        "select-best",
        "similar",
        "skill-used",
        "starts-with",
        "tool-call-f1",
        "trace-error-spans",
        "trace-span-count",
        "trace-span-duration",
        "webhook",
        "word-count",
    ],
    key=len,
    reverse=True,
)
"""promptfoo's assertion types (``BaseAssertionTypesSchema`` over its versions), for reading CSV cells."""
_CSV_ASSERTION = re.compile(rf"^(not-)?({'|'.join(map(re.escape, _KNOWN_TYPES))})(?:\((\d+(?:\.\d+)?)\))?(?::(.*))?$",
                            re.DOTALL)  # fmt: skip
_LIST_TYPES = {"contains-all", "contains-any", "icontains-all", "icontains-any"}
_CSV_PREFIXES = (("javascript:", "javascript"), ("fn:", "javascript"), ("eval:", "javascript"),
                 ("grade:", "llm-rubric"), ("llm-rubric:", "llm-rubric"), ("python:", "python"))  # fmt: skip


def assertion_from_string(expected: str) -> dict[str, Any]:
    """A CSV ``__expected`` cell as the assertion promptfoo reads from it (``assertionFromString``): a known
    ``[not-]TYPE[(threshold)][:value]``, a legacy prefix, or else an ``equals`` of the whole cell."""
    for prefix, kind in _CSV_PREFIXES:
        if expected.startswith(prefix):
            return {"type": kind, "value": expected[len(prefix) :]}
    if expected.startswith("file://"):
        return {"type": "python" if ".py" in expected else "javascript", "value": expected}
    match = _CSV_ASSERTION.match(expected)
    if match is None:
        return {"type": "equals", "value": expected}
    negated, kind, threshold, value = match.groups()
    assertion: dict[str, Any] = {"type": f"{negated or ''}{kind}"}
    if value is not None:
        assertion["value"] = [part.strip() for part in value.split(",")] if kind in _LIST_TYPES else value
    if threshold is not None:
        assertion["threshold"] = float(threshold)
    return assertion


@dataclass
class Checks:
    """What a test's assertions became in Assay's terms."""

    assertions: list[Assertion] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    json_response: bool = False
    schemas: list[str] = field(default_factory=list)

    @property
    def output_condition(self) -> str:
        return " AND ".join(self.conditions)


def _regexp_term(pattern: str) -> str:
    """``regexp("...")`` for the condition language: a quote becomes ``\\x22``, which the regex engine reads
    as a quote, so no pattern can close the string early."""
    out, index = [], 0
    while index < len(pattern):
        pair = pattern[index : index + 2]
        if pair == '\\"':
            out.append("\\x22")
            index += 2
        elif pattern[index] == "\\":
            out.append(pair)
            index += 2
        else:
            out.append("\\x22" if pattern[index] == '"' else pattern[index])
            index += 1
    return f'regexp("{"".join(out)}")'


def _resolve(item: Any, root: Any) -> Any:
    """A ``{"$ref": "#/a/b"}`` entry replaced by what it points to inside the file; None when it points nowhere."""
    if not (isinstance(item, dict) and isinstance(item.get("$ref"), str)):
        return item
    target = root
    for part in item["$ref"].removeprefix("#/").split("/"):
        if not isinstance(target, dict) or part not in target:
            return None
        target = target[part]
    return target


def _values(value: Any, as_list: bool) -> list[str] | None:
    if as_list:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",")]
        if isinstance(value, list) and value and all(isinstance(item, str | int | float) for item in value):
            return [var_text(item) for item in value]
        return None
    return [var_text(value)] if isinstance(value, str | int | float) and not isinstance(value, bool) else None


def _schema(value: Any) -> str | None:
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return value if isinstance(parsed, dict) else None
    return None


def add_assertion(checks: Checks, item: Any, root: Any, options: ImportOptions) -> None:
    """Map one ``assert`` entry onto ``checks``, or note it as not mapped."""
    resolved = _resolve(item, root)
    if resolved is None:
        options.note(f"assert $ref {item['$ref']} not mapped (it points nowhere in the file)")
        return
    item = resolved
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        options.note(f"assert entry {json.dumps(item, default=str)[:40]} not mapped (no type)")
        return
    kind: str = item["type"]
    base, negate = (kind[4:], True) if kind.startswith("not-") else (kind, False)
    value = item.get("value")
    reason = "a transform" if "transform" in item else None
    if reason is None and base in _TEXT_TYPES:
        assay_type, ignore_case, as_list = _TEXT_TYPES[base]
        targets = _values(value, as_list)
        if targets:
            weight = item.get("weight", 1)
            if not (isinstance(weight, int | float) and 0 <= weight <= 1):
                options.note(f"assert weight {weight} not mapped (Assay weights run from 0 to 1)")
                weight = 1
            checks.assertions.append(
                Assertion(
                    type=assay_type,  # type: ignore[arg-type]
                    targets=targets,
                    negate=negate,
                    ignore_case=ignore_case,
                    weight=weight,
                )
            )
            return
        reason = f"value {json.dumps(value, default=str)[:40]}"
    elif reason is None and base == "regex" and isinstance(value, str):
        checks.conditions.append(("NOT " if negate else "") + _regexp_term(value))
        return
    elif reason is None and kind == "is-json":
        checks.json_response = True
        if value is None:
            return
        if (schema := _schema(value)) is not None:
            checks.schemas.append(schema)
            return
        reason = "a schema that is not inline JSON"
    elif reason is None and kind in _THRESHOLD_TYPES and isinstance(item.get("threshold"), int | float):
        assay_type, factor = _THRESHOLD_TYPES[kind]
        checks.assertions.append(Assertion(type=assay_type, threshold=item["threshold"] * factor))  # type: ignore[arg-type]
        return
    options.note(f"assert type {kind} not mapped" + (f" ({reason})" if reason else ""))
