"""Telling a file's format from its content, so that no one has to name it.

Each format has top-level keys the others lack: an Eval Studio test lab holds ``dataset`` / ``raw_dataset``
(both kinds of lab have ``models``), an Assay lab ``rows``, a suite ``tests`` (Assay's own with the
``schema_version`` Assay always writes, Eval Studio's without), and flat evaluation sets are lists of records
with ``request`` (MLflow) or ``user_input`` (Ragas). CSV files can only be Ragas. An Assay suite written by
hand without ``schema_version`` is read as Eval Studio's, whose importer takes every Assay test case field.
"""

from pathlib import Path
from typing import Any

from assay.formats.errors import FormatError, load_json, parse_json, preview, read_text

AUTO = "auto"
"""The format name that asks `assay.formats.import_file` to detect the format."""

_LOOKED_FOR = (
    "assay (a suite with tests and schema_version, or a lab with rows), eval-studio-suite (tests), "
    "eval-studio-testlab (dataset or raw_dataset), mlflow (records with request), ragas (records with "
    "user_input, or a .csv file)"
)


def detect_format(path: Path) -> str:
    """The import format of ``path``: ``assay``, ``eval-studio-suite``, ``eval-studio-testlab``, ``mlflow``
    or ``ragas``; a `FormatError` says what was looked for when the content matches none."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "ragas"
    if suffix == ".jsonl":
        return _flat_format(path, [_first_jsonl_record(path)])
    data = load_json(path)
    if isinstance(data, list):
        return _flat_format(path, data)
    if not isinstance(data, dict):
        raise _undetected(path, "a JSON value that is neither an object nor a list of records")
    keys = set(data)
    if keys & {"dataset", "raw_dataset"}:
        return "eval-studio-testlab"
    if keys & {"rows", "models"}:
        return "assay"
    if "tests" in keys:
        return "assay" if "schema_version" in keys else "eval-studio-suite"
    if isinstance(data.get("records"), list):
        return _flat_format(path, data["records"])
    raise _undetected(path, _with_keys("an object", keys))


def _first_jsonl_record(path: Path) -> Any:
    lines = enumerate(read_text(path).split("\n"), start=1)
    number, line = next((number, line) for number, line in lines if line.strip())  # read_text refuses blank
    return parse_json(line, path, number)


def _flat_format(path: Path, records: list[Any]) -> str:
    if not records:
        raise _undetected(path, "an empty list of records")
    first = records[0]
    if not isinstance(first, dict):
        raise _undetected(path, f"a record that is not an object ({preview(first)})")
    if "request" in first:
        return "mlflow"
    if "user_input" in first:
        return "ragas"
    raise _undetected(path, _with_keys("records", set(first)))


def _with_keys(what: str, keys: set[str]) -> str:
    shown = sorted(keys)[:10]
    return f"{what} with keys {shown}" + (" and more" if len(keys) > len(shown) else "")


def _undetected(path: Path, found: str) -> FormatError:
    message = f"cannot tell the format; looked for {_LOOKED_FOR}; found {found}"
    return FormatError(path, "", f"{message}; name the format to read the file as one of these")
