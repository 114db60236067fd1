"""What every format shares: `FormatError`, turning pydantic errors into it, and safe file reading.

Every problem with an input file is reported as ``<file>: <where>: <what was expected>`` so that a person can
open the file and fix it without reading a traceback. ``<where>`` is a JSON path (``tests[0].test_cases[2]
.prompt``) or, for line-based files, ``line N`` with the field or column.
"""

import json
import types
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, ValidationError

Loc = tuple[str | int, ...]
Locator = Callable[[Loc], str]
"""Turns a pydantic error location inside one record into a location in the file."""

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_LISTED_ERRORS = 5
_PLURALS = {"a string": "strings", "an integer": "integers", "a number": "numbers", "an object": "objects"}
_KEY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://assay.dev/formats/stable-key")


class FormatError(ValueError):
    """An input file (or an object being exported) does not have the shape a format needs."""

    def __init__(self, path: Path | str, location: str, message: str) -> None:
        self.path = Path(path)
        self.location = location
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(part for part in (str(self.path), self.location, self.message) if part)

    def __reduce__(self) -> tuple[type["FormatError"], tuple[Path, str, str]]:
        # Exceptions pickle through their args; ours has three, so multiprocessing needs this.
        return (FormatError, (self.path, self.location, self.message))


def json_path(*parts: str | int) -> str:
    """``("tests", 0, "prompt")`` -> ``tests[0].prompt``; a leading part may already be a rendered path."""
    rendered = ""
    for part in parts:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif part:
            rendered = f"{rendered}.{part}" if rendered else part
    return rendered


def at_path(loc: Loc) -> str:
    """Location of a field in a JSON document, the default `Locator`."""
    return json_path(*loc)


def at_line(line: int, loc: Loc = ()) -> str:
    """Location of a field in a JSONL record: ``line 4, request.messages[0].content``."""
    field = json_path(*loc)
    return f"line {line}, {field}" if field else f"line {line}"


def at_cell(line: int, loc: Loc) -> str:
    """Location of a CSV cell: ``line 3, column retrieved_contexts``."""
    return f"line {line}, column {json_path(*loc)}"


def stable_key(*parts: str | int) -> str:
    """A key derived from where a record sits, so re-importing the same file yields the same keys."""
    return str(uuid.uuid5(_KEY_NAMESPACE, "/".join(str(part) for part in parts)))


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


def _explain(error: Any, model: type[BaseModel] | None) -> str:
    kind, loc = error["type"], tuple(error["loc"])
    expected = expected_at(model, loc) if model else None
    if kind == "missing":
        return f"field required (expected {expected})" if expected else "field required"
    if kind.endswith(("_type", "_parsing")) and expected:
        message = f"expected {expected}"
    else:
        message = str(error["msg"]).removeprefix("Value error, ")
        message = message[:1].lower() + message[1:]
    if kind in ("value_error", "assertion_error"):
        return message  # a validator's own message already says what is wrong
    return f"{message} (got {preview(error['input'])})"


def from_validation_error(
    error: ValidationError, path: Path, *, model: type[BaseModel] | None = None, where: Locator = at_path
) -> FormatError:
    """One `FormatError` located at the first problem; the message also lists the next few problems."""
    details = error.errors()
    located = [(where(tuple(detail["loc"])), _explain(detail, model)) for detail in details]
    location, message = located[0]
    others = [f"{loc}: {msg}" if loc else msg for loc, msg in located[1:MAX_LISTED_ERRORS]]
    if others:
        message += "; also " + "; ".join(others)
    if len(located) > MAX_LISTED_ERRORS:
        message += f"; and {len(located) - MAX_LISTED_ERRORS} more"
    return FormatError(path, location, message)


def validate(model: type[ModelT], data: object, path: Path, *, where: Locator = at_path) -> ModelT:
    """``model.model_validate(data)``, reporting failures as a `FormatError` located in ``path``."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise from_validation_error(error, path, model=model, where=where) from None


def read_text(path: Path) -> str:
    """The file's text; missing, unreadable, empty and non-UTF-8 files are reported by name."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FormatError(path, "", "file not found") from None
    except IsADirectoryError:
        raise FormatError(path, "", "is a directory, expected a file") from None
    except OSError as error:
        raise FormatError(path, "", f"cannot read the file ({error.strerror})") from None
    try:
        text = data.decode("utf-8-sig")  # tolerate the BOM spreadsheet programs put in front of CSV files
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        message = f"not valid UTF-8 (byte 0x{data[error.start]:02x}); save the file as UTF-8"
        raise FormatError(path, f"line {line} column {column}", message) from None
    if not text.strip():
        raise FormatError(path, "", "file is empty")
    return text


def parse_json(text: str, path: Path, line: int | None = None) -> Any:
    """Parse JSON text; ``line`` is the line of ``text`` within the file, for JSONL."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        number = error.lineno if line is None else line + error.lineno - 1
        raise FormatError(path, f"line {number} column {error.colno}", f"invalid JSON: {error.msg}") from None


def load_json(path: Path) -> Any:
    return parse_json(read_text(path), path)


def load_records(path: Path) -> list[tuple[Locator, dict[str, Any]]]:
    """The records of a ``.jsonl`` file (one object a line) or a ``.json`` list (or ``{"records": [...]}``).

    Each record comes with the locator that names a field of it in error messages.
    """
    if path.suffix.lower() == ".jsonl":
        # split("\n"), not splitlines(): JSON strings may hold U+2028 and others that splitlines breaks on
        items: list[tuple[Locator, object]] = [
            (lambda loc, line=number: at_line(line, loc), parse_json(line_text, path, number))
            for number, line_text in enumerate(read_text(path).split("\n"), start=1)
            if line_text.strip()
        ]
    else:
        data = load_json(path)
        prefix = "records" if isinstance(data, dict) and "records" in data else ""
        if prefix:
            data = data["records"]
        if not isinstance(data, list):
            expected = 'expected a list of records or {"records": [...]}'
            raise FormatError(path, prefix, f"{expected} (got {preview(data)})")
        items = [(lambda loc, i=index: json_path(prefix, i, *loc), item) for index, item in enumerate(data)]
    records: list[tuple[Locator, dict[str, Any]]] = []
    for where, item in items:
        if not isinstance(item, dict):
            raise FormatError(path, where(()), f"expected an object (got {preview(item)})")
        records.append((where, item))
    return records


def write_text(path: Path, text: str) -> None:
    """Write an export, creating its folder; failures name the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    except OSError as error:
        raise FormatError(path, "", f"cannot write the file ({error.strerror})") from None


def write_json(path: Path, data: object) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    write_text(path, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
