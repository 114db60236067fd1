"""The JSON documents of a trace file: one per line (JSON Lines, what the OpenTelemetry Collector's file
exporter and most span exports write) or one for the whole file.

JSON Lines files are read a line at a time, so a large export never sits in memory as one parsed document. A
line that does not parse (a file cut short while it was written, say) is an error naming the file and line
and, when the line got that far, the last span id it began.
"""

import re
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import orjson

from assay.formats.errors import MAX_INPUT_BYTES, FormatError, open_input, parse_json, read_text

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line of a JSON Lines trace file read: one export request of spans, not a file's worth."""
_LAST_SPAN_ID = re.compile(rb'"(?:spanId|span_id)"\s*:\s*"([^"]{1,64})"')


def documents(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line, document)`` for each JSON document of ``path``; the line is where the document starts."""
    if _is_json_lines(path):
        yield from _lines(path)
    else:
        text = read_text(path)
        try:
            document = parse_json(text, path)
        except FormatError as error:
            raise _whole_file_hint(error, text) from None
        yield 1, document


def _whole_file_hint(error: FormatError, text: str) -> FormatError:
    """A whole-file document that does not parse names the last span it began before the fault, and says when
    the file ends inside the document (cut short while it was written)."""
    located = re.fullmatch(r"line (\d+) column (\d+)", error.location)
    if located:
        line, column = int(located.group(1)), int(located.group(2))
        offset = sum(len(before) + 1 for before in text.split("\n")[: line - 1]) + column - 1
        spans = _LAST_SPAN_ID.findall(text[:offset].encode("utf-8", errors="replace"))
        if spans:
            error.location += f" (in or after span {spans[-1].decode('utf-8', errors='replace')})"
    if text.lstrip()[:1] in ("{", "[") and text.rstrip()[-1:] not in ("}", "]"):
        error.message += "; the file ends inside the document: it looks cut short (truncated)"
    return error


def _is_json_lines(path: Path) -> bool:
    """A ``.jsonl`` file, or any file whose first non-blank line is a whole JSON value on its own."""
    if path.suffix.lower() == ".jsonl":
        return True
    with open_input(path) as file:
        for number in count(1):
            raw = file.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            if len(raw) > MAX_LINE_BYTES:
                raise _too_long(path, number)
            if raw.strip():
                try:
                    orjson.loads(raw)
                except orjson.JSONDecodeError:
                    return False
                return True
    raise FormatError(path, "", "file is empty")


def _too_long(path: Path, number: int) -> FormatError:
    message = f"longer than {MAX_LINE_BYTES} bytes: no span of a trace Assay reads is that large (an attribute "
    return FormatError(path, f"line {number}", message + "holding a whole file?)")


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Each line read strictly, as every other input is (``parse_json``: no repeated key, NaN or lone surrogate,
    at most ``MAX_JSON_DEPTH`` levels, valid UTF-8), and bounded: a line is read no further than
    ``MAX_LINE_BYTES``, so one giant attribute is an error naming its line, not a parser out of memory."""
    read = 0
    seen = False
    with open_input(path) as file:
        for number in count(1):
            raw = file.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            read += len(raw)
            if read > MAX_INPUT_BYTES:
                raise FormatError(path, f"line {number}", f"the file is larger than the {MAX_INPUT_BYTES} bytes "
                                  "an input file may be")  # fmt: skip
            if len(raw) > MAX_LINE_BYTES:
                raise _too_long(path, number)
            if not raw.strip():
                continue
            seen = True
            yield number, _located_parse(path, number, raw)
    if not seen:
        raise FormatError(path, "", "file is empty")


def _located_parse(path: Path, number: int, raw: bytes) -> Any:
    """Parse a line with the strict parser, whose error names the line and column; add the last span the line
    began, which is the one a truncated export cut."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        column = len(raw[: error.start].decode("utf-8", errors="replace")) + 1
        raise FormatError(path, f"line {number} column {column}", f"not valid UTF-8 (byte 0x{raw[error.start]:02x}): "
                          "a text would be changed to U+FFFD; export the traces as UTF-8") from None  # fmt: skip
    try:
        return parse_json(text.removeprefix("\ufeff") if number == 1 else text, path, number)
    except FormatError as error:
        spans = _LAST_SPAN_ID.findall(raw)
        if spans:
            error.location += f" (in or after span {spans[-1].decode('utf-8', errors='replace')})"
        if not raw.endswith(b"\n"):
            error.message += "; the file ends inside this line: it looks cut short (truncated)"
        raise
