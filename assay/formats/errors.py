"""What every format shares: `FormatError`, turning pydantic errors into it, and safe file reading.

Every problem with an input file is reported as ``<file>: <where>: <what was expected>`` so that a person can
open the file and fix it without reading a traceback. ``<where>`` is a JSON path (``tests[0].test_cases[2]
.prompt``) or, for line-based files, ``line N`` with the field or column.

JSON is read strictly (`parse_json`): a repeated key, which would silently drop the first value, and a lone
surrogate, which is not a character, are refused with their line. Reading is bounded so that no input can
hang or crash an import: only regular files are opened (a FIFO would block forever), files over
`MAX_INPUT_BYTES` are refused before being read, and JSON nested deeper than `MAX_JSON_DEPTH` is refused
instead of overflowing the stack of whatever walks it later.
"""

import json
import os
import stat
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from assay.atomic import write_atomic
from assay.formats.explain import Loc, explain, preview
from assay.formats.json_depth import deeper_than, offset_beyond
from assay.jsonio import JSONInputError, pretty_json, strict_loads

Locator = Callable[[Loc], str]
"""Turns a pydantic error location inside one record into a location in the file."""

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_LISTED_ERRORS = 5
MAX_INPUT_BYTES = 512 * 1024 * 1024
"""Largest input file read; larger ones are refused before reading rather than exhausting memory."""
MAX_JSON_DEPTH = 100
"""Deepest JSON nesting read: far beyond any real suite or lab, far below Python's recursion limit."""

_KEY_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://assay.dev/formats/stable-key")
_NON_BLOCKING = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO swapped in after the check must not block
_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


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
    """Location of a CSV cell: ``line 3, column retrieved_contexts``; of the whole row when no cell is named."""
    return f"line {line}, column {json_path(*loc)}" if loc else f"line {line}"


def stable_key(*parts: str | int) -> str:
    """A key derived from where a record sits, so re-importing the same file yields the same keys."""
    return str(uuid.uuid5(_KEY_NAMESPACE, "/".join(str(part) for part in parts)))


def from_validation_error(
    error: ValidationError, path: Path, *, model: type[BaseModel] | None = None, where: Locator = at_path
) -> FormatError:
    """One `FormatError` located at the first problem; the message also lists the next few problems."""
    details = error.errors()
    located = [(where(tuple(detail["loc"])), explain(detail, model)) for detail in details]
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


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count} bytes"


def _check_regular(path: Path, status: os.stat_result) -> None:
    """Refuse anything but a regular file: reading a FIFO or a device could block or never end."""
    if stat.S_ISDIR(status.st_mode):
        raise FormatError(path, "", "is a directory, expected a file")
    if not stat.S_ISREG(status.st_mode):
        kind = next((name for is_kind, name in _SPECIAL_FILES if is_kind(status.st_mode)), "a special file")
        raise FormatError(path, "", f"is not a regular file ({kind})")
    if status.st_size > MAX_INPUT_BYTES:
        message = f"is {_size(status.st_size)}, larger than the {_size(MAX_INPUT_BYTES)} an input file may be"
        raise FormatError(path, "", message)


def check_regular_file(path: Path) -> None:
    """A `FormatError` unless ``path`` is a regular file an input may be (missing, a FIFO, a device, too big)."""
    try:
        _check_regular(path, path.stat())
    except FileNotFoundError:
        raise FormatError(path, "", "no such file") from None
    except OSError as error:
        raise FormatError(path, "", f"cannot read the file ({error.strerror})") from None


def read_bytes(path: Path) -> bytes:
    """The content of a regular file of at most `MAX_INPUT_BYTES`; anything else is a `FormatError`.

    The file is checked before it is opened (opening a FIFO for reading blocks until a writer comes), and
    again once open, without blocking, in case the path was replaced in between.
    """
    try:
        _check_regular(path, path.stat())
        with open(path, "rb", opener=lambda name, flags: os.open(name, flags | _NON_BLOCKING)) as file:
            _check_regular(path, os.fstat(file.fileno()))
            data = file.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise FormatError(path, "", "file not found") from None
    except OSError as error:
        raise FormatError(path, "", f"cannot read the file ({error.strerror})") from None
    if len(data) > MAX_INPUT_BYTES:  # it grew after the check
        raise FormatError(path, "", f"is larger than the {_size(MAX_INPUT_BYTES)} an input file may be")
    return data


@contextmanager
def open_input(path: Path) -> Iterator[BinaryIO]:
    """A regular file of at most `MAX_INPUT_BYTES`, opened for streaming (a large trace export is read a line at
    a time); the same checks as `read_bytes`, as `FormatError`s."""
    try:
        _check_regular(path, path.stat())
        file = open(path, "rb", opener=lambda name, flags: os.open(name, flags | _NON_BLOCKING))  # noqa: SIM115
    except FileNotFoundError:
        raise FormatError(path, "", "file not found") from None
    except OSError as error:
        raise FormatError(path, "", f"cannot read the file ({error.strerror})") from None
    with file:
        _check_regular(path, os.fstat(file.fileno()))
        yield file


def read_text(path: Path) -> str:
    """The file's text; missing, special, oversized, unreadable, empty and non-UTF-8 files are named."""
    data = read_bytes(path)
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


def _too_deep(text: str, path: Path, line: int | None) -> FormatError:
    offset = offset_beyond(text, MAX_JSON_DEPTH) or 0
    number = text.count("\n", 0, offset) + (1 if line is None else line)
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return FormatError(path, f"line {number} column {column}", f"nested deeper than {MAX_JSON_DEPTH} levels")


def parse_json(text: str, path: Path, line: int | None = None) -> Any:
    """Parse JSON text of at most `MAX_JSON_DEPTH` levels, without repeated keys or lone surrogates
    (`assay.jsonio.strict_loads`); ``line`` is the line of ``text`` within the file, for JSONL."""
    try:
        value = strict_loads(text, first_line=line or 1)
    except JSONInputError as error:
        message = f"{error.where}: {error.message}" if error.where else error.message
        raise FormatError(path, f"line {error.line} column {error.column}", message) from None
    except json.JSONDecodeError as error:
        number = error.lineno if line is None else line + error.lineno - 1
        raise FormatError(path, f"line {number} column {error.colno}", f"invalid JSON: {error.msg}") from None
    except RecursionError:
        raise _too_deep(text, path, line) from None
    except ValueError:  # the only other failure: an integer too long for int() (CVE-2020-10735 guard)
        limit = sys.get_int_max_str_digits()
        where = "" if line is None else f"line {line}"
        raise FormatError(path, where, f"invalid JSON: a number has more than {limit} digits") from None
    if deeper_than(value, MAX_JSON_DEPTH):
        raise _too_deep(text, path, line)
    return value


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
    """Write an export whole or not at all (``assay.atomic``), creating its folder; failures name the file."""
    try:
        write_atomic(path, text)
    except OSError as error:
        raise FormatError(path, "", f"cannot write the file ({error.strerror})") from None


def write_json(path: Path, data: object) -> None:
    write_text(path, pretty_json(data))


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    write_text(path, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
