"""Reading CSV files so that a stray quote or a row cut short is an error rather than silently lost data.

A quote that opens a cell and is never closed makes the ``csv`` module read every following line into that
one cell, so rows vanish without a word. The reader here is strict (a quote in the middle of a quoted cell
must be doubled) and refuses the two shapes an unbalanced quote leaves behind: a quoted cell still open at
the end of the file, and a quoted cell spanning lines one of which has exactly as many commas as a row. Each
error names the line where the quote opened. Every row must have as many cells as the header has columns.
"""

import csv
import io
import re
from collections.abc import Collection
from pathlib import Path

from assay.formats.errors import MAX_INPUT_BYTES, FormatError, Locator, at_cell, preview, read_text

Row = tuple[int, list[str]]
"""A row's cells with the line it starts on (a quoted cell may run over several lines)."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what the csv module, reading with newline="", ends lines at
_DELIMITER = ","


def read_csv(path: Path) -> tuple[list[str], list[Row]]:
    """The header and every following row of a CSV file, each with the line it starts on.

    Blank lines come back as rows without cells. A `FormatError` names the line of any malformed quote.
    """
    text = read_text(path)
    # The default limit (131,072 characters) would refuse long answers; no cell can be larger than the file.
    csv.field_size_limit(max(csv.field_size_limit(), MAX_INPUT_BYTES))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[Row] = []
    start = 1
    try:
        for cells in reader:
            rows.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as error:
        raise _malformed(text, path, start, reader.line_num, error) from None
    header = rows[0][1] if rows else []
    _check_unique_columns(path, header)
    for line, cells in rows[1:]:
        _check_no_swallowed_row(path, header, line, cells)
        _check_cell_count(path, header, line, cells)
    return header, rows[1:]


def csv_records(path: Path, required: Collection[str]) -> list[tuple[Locator, dict[str, str]]]:
    """The rows of a CSV file as records of their non-empty cells, each with the locator naming its line and
    column; the header must have one of the ``required`` columns (all of them named in the error)."""
    header_cells, rows = read_csv(path)
    header = [name.strip() for name in header_cells]
    if required and not any(name in header for name in required):
        expected = " or ".join(repr(name) for name in required)
        raise FormatError(path, "line 1", f"missing column {expected} (found columns {header})")
    records: list[tuple[Locator, dict[str, str]]] = []
    for line, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        record = {name: cell for name, cell in zip(header, cells, strict=True) if cell != ""}
        records.append((lambda loc, n=line: at_cell(n, loc), record))
    return records


def csv_header(path: Path) -> list[str]:
    """The column names of a CSV file's first line, read leniently: telling a format needs no valid body."""
    first = next(csv.reader(io.StringIO(read_text(path), newline="")), [])
    return [name.strip() for name in first]


def _check_unique_columns(path: Path, header: list[str]) -> None:
    """Refuse a column named twice: every reader keys cells by name, so the second would silently win."""
    first: dict[str, int] = {}
    for number, name in enumerate(header, start=1):
        key = name.strip()
        if key and key in first:
            raise FormatError(
                path, "line 1", f"the column {key!r} appears twice (columns {first[key]} and {number}): a reader "
                "would keep only the second; rename or remove one",
            )  # fmt: skip
        first.setdefault(key, number)


def _check_cell_count(path: Path, header: list[str], line: int, cells: list[str]) -> None:
    """Refuse a row with fewer or more cells than the header has columns (blank lines aside): a file cut
    mid-row, or a comma lost or added, would otherwise shift or drop a value without a word."""
    if len(cells) == len(header) or not any(cell.strip() for cell in cells):
        return
    columns = preview(header, 80)
    if len(cells) < len(header):
        missing = preview(header[len(cells) :], 60)
        message = (
            f"{len(cells)} cell(s) but the header has {len(header)} columns ({columns}); no cell for {missing}: "
            "the row is cut short or a comma is missing (leave a cell empty with ,,)"
        )
    else:
        message = (
            f"{len(cells)} cells but the header has {len(header)} columns ({columns}): a comma too many, or a "
            'cell holding a comma that is not quoted ("a, b")'
        )
    raise FormatError(path, f"line {line}", message)


def _malformed(text: str, path: Path, row_start: int, line: int, error: csv.Error) -> FormatError:
    if "unexpected end of data" in str(error):
        opened = _unclosed_quote_line(text, row_start)
        message = (
            f"a quoted cell opened on this line is never closed, so every line to the end of the file "
            f"(line {line}) would be read into it; check this line for an unbalanced quote"
        )
        return FormatError(path, f"line {opened}", message)
    if "expected after" in str(error):
        message = 'a quote inside a quoted cell must be doubled (""), or a quote on an earlier line is unbalanced'
        return FormatError(path, f"line {line}", f"invalid CSV: {message}")
    return FormatError(path, f"line {line}", f"invalid CSV: {error}")


def _unclosed_quote_line(text: str, row_start: int) -> int:
    """The line where the cell left open at the end of the file starts.

    Read leniently from the row's first line, the open cell is the row's last cell and runs to the end; the
    cells before it (whose line breaks count) read the same as in the strict pass that failed.
    """
    lines = io.StringIO(text, newline="").readlines()
    tail = "".join(lines[row_start - 1 :])
    try:
        cells = next(csv.reader(io.StringIO(tail, newline="")), [])
    except csv.Error:
        return row_start
    return row_start + sum(len(_LINE_BREAK.findall(cell)) for cell in cells[:-1])


def _check_no_swallowed_row(path: Path, header: list[str], row_start: int, cells: list[str]) -> None:
    """Refuse a cell whose second or later line looks like a whole row: an unbalanced quote swallowed it."""
    if len(header) < 2:
        return  # every line of a one-column file looks like a row
    line = row_start
    for index, cell in enumerate(cells):
        cell_lines = _LINE_BREAK.split(cell)
        for offset, swallowed in enumerate(cell_lines[1:], start=1):
            if swallowed.count(_DELIMITER) == len(header) - 1:
                column = header[index] if index < len(header) else str(index + 1)
                message = (
                    f"this quoted cell runs on to line {line + offset}, which looks like a row of its own "
                    f"({preview(swallowed)}); an unbalanced quote here merges rows: close it, or double it "
                    f'("") if it is part of the text'
                )
                raise FormatError(path, at_cell(line, (column,)), message)
        line += len(cell_lines) - 1
