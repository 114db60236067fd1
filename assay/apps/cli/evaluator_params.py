"""Evaluator parameters from the command line: ``--param ID.NAME=VALUE`` and ``--evaluators-config FILE``.

Everything is checked before any flow starts, so a typo costs a second and one line naming the flag or
``file:field``, never a Prefect server start-up. Values are coerced by the evaluator's own field types (an
evaluator is a dataclass), so ``use_stemmer=true`` becomes ``True`` and ``metric_threshold=0.6`` a float
exactly as a Python caller would pass them. A parameter named like a secret is refused: files, parameters
and results.json are shared, so a key belongs in an environment variable and only its name in a setting.
"""

import dataclasses
import json
import re
import types
import typing
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from assay.jsonio import JSONInputError, strict_loads

EvaluatorParameters = dict[str, dict[str, Any]]

_SECRET_WORDS = {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "credential", "credentials"}
_ENV_NAME_SUFFIXES = ("_env", "_var", "_env_var", "_variable")
_ASSIGNMENT = re.compile(r"^(?P<evaluator>[A-Za-z0-9_-]+)\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$", re.DOTALL)


def looks_like_secret(name: str) -> bool:
    """True for names such as ``api_key``, ``token`` or ``password``; not for ``max_tokens`` or for names that
    hold the *name* of an environment variable (``api_key_env``)."""
    lowered = name.lower()
    if lowered.endswith(_ENV_NAME_SUFFIXES):
        return False
    return any(word in _SECRET_WORDS for word in lowered.split("_"))


def parse_assignment(text: str) -> tuple[str, str, str]:
    """``rouge.use_stemmer=true`` -> ("rouge", "use_stemmer", "true")."""
    match = _ASSIGNMENT.match(text.strip())
    if match is None:
        raise ValueError(f"--param {text!r}: expected EVALUATOR.PARAMETER=VALUE, e.g. rouge.use_stemmer=true")
    return match["evaluator"], match["name"], match["value"]


@cache
def _field_types(evaluator_id: str) -> dict[str, Any]:
    """The evaluator's parameters and their declared types (``services`` is no parameter)."""
    from assay.evaluators import evaluator_class

    cls = evaluator_class(evaluator_id)
    hints = typing.get_type_hints(cls)
    return {field.name: hints[field.name] for field in dataclasses.fields(cls) if field.name != "services"}


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _accepts_plain_text(annotation: Any) -> bool:
    """Whether a string is a value of this type as written (``str``, ``str | None``)."""
    if annotation is str:
        return True
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and str in typing.get_args(annotation)


def coerce(evaluator_id: str, name: str, value: Any, where: str, *, from_text: bool) -> Any:
    """``value`` as the parameter's declared type; ``from_text`` values (from ``--param``) are read as JSON
    first (``true``, ``0.5``, ``["a"]``, ``null``) unless the type takes text as it is."""
    if looks_like_secret(name):
        raise ValueError(
            f"{where}: {name!r} looks like a secret; never pass secrets as evaluator parameters, set an "
            "environment variable and give its name instead"
        )
    types = _field_types(evaluator_id)
    if name not in types:
        raise ValueError(f"{where}: evaluator {evaluator_id!r} has no parameter {name!r}; it takes {sorted(types)}")
    annotation = types[name]
    candidate = value
    if from_text and not _accepts_plain_text(annotation):
        try:
            candidate = strict_loads(value)
        except JSONInputError as error:
            raise ValueError(f"{where}: {error.message}") from None
        except json.JSONDecodeError:
            candidate = value
    try:
        return TypeAdapter(annotation).validate_python(candidate)
    except ValidationError as error:
        problem = error.errors()[0]["msg"]
        shown = value if len(str(value)) <= 60 else f"{str(value)[:57]}..."
        raise ValueError(f"{where}: {shown!r} is not a valid {_type_name(annotation)} ({problem})") from None


def _check_evaluator(evaluator_id: str, requested: Sequence[str], where: str) -> None:
    from assay.evaluators import evaluator_ids
    from assay.evaluators.selection import selection_keyword

    known = evaluator_ids()
    if evaluator_id not in known:
        raise ValueError(f"{where}: unknown evaluator {evaluator_id!r}; known evaluators: {', '.join(known)}")
    if selection_keyword(list(requested)) is None and evaluator_id not in requested:
        raise ValueError(
            f"{where}: evaluator {evaluator_id!r} is not selected in --evaluators ({', '.join(requested)}); "
            "add it there or remove its parameters"
        )


def from_config(data: Any, source: str, requested: Sequence[str]) -> EvaluatorParameters:
    """``{"rouge": {"use_stemmer": true}}`` (the parsed JSON or TOML of ``source``), checked field by field."""
    if not isinstance(data, Mapping):
        raise ValueError(f'{source}: expected an object with evaluator ids as keys, e.g. {{"rouge": {{...}}}}')
    parameters: EvaluatorParameters = {}
    for evaluator_id, values in data.items():
        _check_evaluator(evaluator_id, requested, f"{source}:{evaluator_id}")
        if not isinstance(values, Mapping):
            raise ValueError(f"{source}:{evaluator_id}: expected an object of parameter names and values")
        parameters[evaluator_id] = {
            name: coerce(evaluator_id, name, value, f"{source}:{evaluator_id}.{name}", from_text=False)
            for name, value in values.items()
        }
    return parameters


def from_assignments(texts: Sequence[str], requested: Sequence[str]) -> EvaluatorParameters:
    """Each ``--param ID.NAME=VALUE``, checked and coerced; a later one for the same parameter wins."""
    parameters: EvaluatorParameters = {}
    for text in texts:
        evaluator_id, name, raw = parse_assignment(text)
        where = f"--param {evaluator_id}.{name}"
        _check_evaluator(evaluator_id, requested, where)
        parameters.setdefault(evaluator_id, {})[name] = coerce(evaluator_id, name, raw, where, from_text=True)
    return parameters


def merged(base: EvaluatorParameters, overrides: EvaluatorParameters) -> EvaluatorParameters:
    """``overrides`` (``--param``) over ``base`` (the config file), parameter by parameter."""
    result = {evaluator_id: dict(values) for evaluator_id, values in base.items()}
    for evaluator_id, values in overrides.items():
        result.setdefault(evaluator_id, {}).update(values)
    return result


def check_buildable(parameters: EvaluatorParameters, where: str) -> None:
    """Build each evaluator once with its parameters, so checks in the evaluator itself (a positive batch
    size, a known method) fail here too and not after the flow started."""
    from assay.evaluators import build_evaluator

    for evaluator_id, values in parameters.items():
        try:
            build_evaluator(evaluator_id, **values)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where} for {evaluator_id}: {error}") from None
