"""The JSON documents of a trace file: one per line (JSON Lines, what the OpenTelemetry Collector's file
exporter and most span exports write) or one for the whole file.

JSON Lines files are read a line at a time, so a large export never sits in memory as one parsed document. A
line that does not parse (a file cut short while it was written, say) is an error naming the file and line
and, when the line got that far, the last span id it began.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from assay.formats.errors import MAX_INPUT_BYTES, FormatError, open_input, parse_json, read_text

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
        for raw in file:
            if raw.strip():
                try:
                    orjson.loads(raw)
                except orjson.JSONDecodeError:
                    return False
                return True
    raise FormatError(path, "", "file is empty")


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    read = 0
    seen = False
    with open_input(path) as file:
        for number, raw in enumerate(file, start=1):
            read += len(raw)
            if read > MAX_INPUT_BYTES:
                raise FormatError(path, f"line {number}", f"the file is larger than the {MAX_INPUT_BYTES} bytes "
                                  "an input file may be")  # fmt: skip
            if not raw.strip():
                continue
            seen = True
            try:
                yield number, orjson.loads(raw)
            except orjson.JSONDecodeError:
                yield number, _located_parse(path, number, raw)
    if not seen:
        raise FormatError(path, "", "file is empty")


def _located_parse(path: Path, number: int, raw: bytes) -> Any:
    """Parse a line orjson refused with the strict parser, whose error names the line and column; add the last
    span the line began, which is the one a truncated export cut."""
    try:
        return parse_json(raw.decode("utf-8", errors="replace"), path, number)
    except FormatError as error:
        spans = _LAST_SPAN_ID.findall(raw)
        if spans:
            error.location += f" (in or after span {spans[-1].decode('utf-8', errors='replace')})"
        if not raw.endswith(b"\n"):
            error.message += "; the file ends inside this line: it looks cut short (truncated)"
        raise
