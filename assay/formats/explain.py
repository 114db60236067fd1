"""Turning a pydantic validation error into words a person can act on: what the field expects, what it got.

Kept apart from `assay.formats.errors` so that module stays about locating problems and reading files.
"""

import json
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel

from assay.redaction import SECRET_NAME

Loc = tuple[str | int, ...]

_PLURALS = {"a string": "strings", "an integer": "integers", "a number": "numbers", "an object": "objects"}


def preview(value: object, limit: int = 40) -> str:
    """A short JSON rendering of an offending value for error messages."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(annotation: object) -> str | None:
    """What a person should write for a field of this type, e.g. ``a list of strings``."""
    origin, args = get_origin(annotation), get_args(annotation)
    basic = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object"}
    if annotation in basic:
        return basic[annotation]
    if origin is Annotated:  # e.g. FiniteFloat: the constraint has its own message
        return describe(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "an object"
    if origin is Literal:
        return "one of " + ", ".join(repr(arg) for arg in args)
    if origin in (list, tuple, set):
        item = describe(args[0]) if args else None
        return f"a list of {_PLURALS[item]}" if item in _PLURALS else "a list"
    if origin is dict:
        return "an object"
    if origin in (Union, types.UnionType):
        named = [describe(arg) for arg in args if arg is not type(None)]
        return " or ".join(name for name in named if name) or None
    return None


def _field_of(model: type[BaseModel], name: str) -> Any:
    for field_name, field in model.model_fields.items():
        aliases = field.validation_alias.choices if isinstance(field.validation_alias, AliasChoices) else []
        if name == field_name or name == field.alias or name in aliases:
            return field
    return None


def expected_at(model: type[BaseModel], loc: Loc) -> str | None:
    """What the field at ``loc`` of ``model`` expects; a wire model's field ``description`` overrides."""
    annotation: object = model
    description = None
    for part in loc:
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        if get_origin(annotation) in (Union, types.UnionType) and len(args) == 1:
            annotation, args = args[0], list(get_args(args[0]))
        if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(part, str):
            field = _field_of(annotation, part)
            if field is None:
                return None
            annotation, description = field.annotation, field.description
        elif args:
            annotation, description = args[-1], None  # list item or dict value
        else:
            return None
    return description or describe(annotation)


def explain(error: Any, model: type[BaseModel] | None) -> str:
    """The message for one of pydantic's ``ValidationError.errors()``; ``model`` is what was validated."""
    kind, loc = error["type"], tuple(error["loc"])
    expected = expected_at(model, loc) if model else None
    if kind == "missing":
        return f"field required (expected {expected})" if expected else "field required"
    if kind == "finite_number":  # Infinity, NaN or an overflowing literal such as 1e400
        message = "expected a finite number"
    elif kind.endswith(("_type", "_parsing")) and expected:
        message = f"expected {expected}"
    else:
        message = str(error["msg"]).removeprefix("Value error, ")
        message = message[:1].lower() + message[1:]
    if kind in ("value_error", "assertion_error"):
        return message  # a validator's own message already says what is wrong
    names = [part for part in loc if isinstance(part, str)]
    if names and SECRET_NAME.search(names[-1]):
        return f"{message} (value not shown: the field's name says it may hold a credential)"
    return f"{message} (got {preview(error['input'])})"
