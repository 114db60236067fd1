"""JSON Schema validators that fetch nothing and run every schema regex through ``assay.bounded_regex``.

jsonschema's defaults are unsafe for schemas written by suite authors and answers written by models:

- a ``$ref`` to a URL is fetched over the network (a remote server would decide the verdict, and the run
  could be pointed at internal addresses). Here the registry holds the published meta-schemas and the schema
  itself (its ``#/...`` pointers, ``$defs`` and embedded ``$id`` resources); any other URI is refused;
- ``pattern``, ``patternProperties`` and ``additionalProperties`` (which re-tests the property patterns) run
  plain ``re`` without a time limit, and ``format: regex`` compiles the answer's text with ``re``. These
  keywords are replaced by implementations on the bounded engine, which raise ``PatternError`` (a timeout or a
  pattern too costly to compile) for the evaluator to leave the case unscored.

``unevaluatedProperties`` re-tests ``patternProperties`` deep inside jsonschema with plain ``re``; a schema
that combines the two is refused by ``unbounded_keyword_problem`` instead of being checked without a bound.
"""

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from jsonschema import FormatChecker, ValidationError
from jsonschema.validators import extend
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from assay import bounded_regex


def _refuse_retrieval(uri: str) -> Resource:
    """Every URI the schema does not define itself: never fetched, reported as unresolvable."""
    raise NoSuchResource(ref=uri)


LOCAL_REGISTRY: Registry = SPECIFICATIONS.combine(Registry(retrieve=_refuse_retrieval))  # type: ignore[call-arg]


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not bounded_regex.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if bounded_regex.search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_keys(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Keys neither named in ``properties`` nor matched by a ``patternProperties`` pattern, in answer order."""
    named = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in named and not any(bounded_regex.search(pattern, key) for pattern in patterns)
    ]


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional_keys(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
        return
    if additional or not extras:
        return
    listed = ", ".join(repr(extra) for extra in sorted(extras))
    if "patternProperties" in schema:
        patterns = ", ".join(repr(pattern) for pattern in sorted(schema["patternProperties"]))
        verb = "does" if len(extras) == 1 else "do"
        yield ValidationError(f"{listed} {verb} not match any of the regexes: {patterns}")
    else:
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _is_regex(instance: object) -> bool:
    """``format: regex`` on the bounded engine: a syntax error fails the format; a pattern over the limits
    raises ``UnsafePattern`` (the check cannot be made, which is not the answer's failure)."""
    if isinstance(instance, str):
        bounded_regex.compile_pattern(instance)
    return True


def _format_checker(base: FormatChecker) -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checkers.update(base.checkers)
    if "regex" in checker.checkers:
        checker.checks("regex", raises=bounded_regex.InvalidPattern)(_is_regex)
    return checker


@lru_cache(maxsize=16)
def bounded_validator_class(base: type) -> Any:
    """``base`` (a draft's validator class) with the regex keywords and the regex format on the bounded engine;
    its ``FORMAT_CHECKER`` is the bounded one, for ``check_schema`` and for validation alike."""
    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties}
    replaced = {keyword: function for keyword, function in keywords.items() if keyword in base.VALIDATORS}
    if "additionalProperties" in base.VALIDATORS:
        replaced["additionalProperties"] = _additional_properties
    return extend(base, validators=replaced, format_checker=_format_checker(base.FORMAT_CHECKER))


def unbounded_keyword_problem(schema: Any) -> str | None:
    """Why the schema cannot be checked within the regex bounds, or None. Walks the schema without recursion
    (it may be nested thousands deep) and errs on the side of refusing: any key of those names counts."""
    found: set[str] = set()
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            found.update(key for key in node if key in ("patternProperties", "unevaluatedProperties"))
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    if len(found) == 2:
        return (
            "combines unevaluatedProperties with patternProperties, which cannot be checked within the regex "
            "time limit; express the allowed properties with additionalProperties instead"
        )
    return None
