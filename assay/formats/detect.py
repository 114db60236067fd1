"""Telling a file's format from its content, so that no one has to name it.

Each format has top-level keys the others lack: an Eval Studio test lab holds ``dataset`` / ``raw_dataset``
(both kinds of lab have ``models``), an Assay lab ``rows``, a suite ``tests`` (Assay's own with the
``schema_version`` Assay always writes, Eval Studio's without, promptfoo's tests with ``vars`` or
``assert``). Flat evaluation sets are records whose fields (or, in a CSV file, whose header's columns) name
the tool that wrote them (`record_format`): ``request`` (MLflow's older Databricks shape), ``inputs`` (MLflow
3 GenAI), ``user_input`` or Ragas 0.1's ``question`` with its answer columns (Ragas), ``input`` with
DeepEval's fields, ``vars`` / ``assert`` or ``__expected`` columns (promptfoo). YAML files are promptfoo's.
An Assay suite written by hand without ``schema_version`` is read as Eval Studio's, whose importer takes every
Assay test case field.
"""

from pathlib import Path
from typing import Any

from assay.formats.errors import FormatError, load_json, parse_json, preview, read_text
from assay.formats.tables import csv_header

AUTO = "auto"
"""The format name that asks `assay.formats.import_file` to detect the format."""

_LOOKED_FOR = (
    "assay (a suite with tests and schema_version, or a lab with rows), eval-studio-suite (tests), "
    "eval-studio-testlab (dataset or raw_dataset), and records or CSV columns of mlflow (request), mlflow-genai "
    "(inputs), ragas (user_input, or question with answer, contexts or ground_truth), deepeval (input with "
    "actual_output, expected_output, retrieval_context or context), promptfoo (vars or assert; __expected "
    "columns; any .yaml file)"
)
_RAGAS_01 = {"answer", "contexts", "ground_truth", "ground_truths"}
_DEEPEVAL = {"actual_output", "expected_output", "retrieval_context", "context", "expected_tools"}
_PROMPTFOO_COLUMNS = ("__expected", "__metadata:", "__description", "__providerOutput", "__prefix", "__suffix")


def record_format(fields: set[str]) -> str | None:
    """The format whose records (or CSV columns) have these field names; None when none has."""
    if fields & {"vars", "assert"} or any(name.startswith(_PROMPTFOO_COLUMNS) for name in fields):
        return "promptfoo"
    if "request" in fields:
        return "mlflow"
    if "inputs" in fields:
        return "mlflow-genai"
    if "user_input" in fields or ("question" in fields and fields & _RAGAS_01):
        return "ragas"
    if ("input" in fields and fields & _DEEPEVAL) or {"scenario", "turns"} <= fields:
        return "deepeval"
    return None


def detect_format(path: Path) -> str:
    """The import format of ``path`` (one of `assay.formats.FORMATS`); a `FormatError` says what was looked
    for when the content matches none."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "promptfoo"
    if suffix == ".csv":
        header = csv_header(path)
        if (format := record_format(set(header))) is None:
            raise _undetected(path, f"CSV columns {header[:10]}")
        return format
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
        if "schema_version" in keys:
            return "assay"
        return "promptfoo" if _promptfoo_tests(data["tests"]) else "eval-studio-suite"
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
    if (format := record_format(set(first))) is None:
        raise _undetected(path, _with_keys("records", set(first)))
    return format


def _promptfoo_tests(tests: Any) -> bool:
    """Whether a config's ``tests`` are promptfoo's: a file reference, or tests with vars or assert."""
    if isinstance(tests, str):
        return True
    first = tests[0] if isinstance(tests, list) and tests else None
    return isinstance(first, str) or (isinstance(first, dict) and bool({"vars", "assert"} & set(first)))


def _with_keys(what: str, keys: set[str]) -> str:
    shown = sorted(keys)[:10]
    return f"{what} with keys {shown}" + (" and more" if len(keys) > len(shown) else "")


def _undetected(path: Path, found: str) -> FormatError:
    message = f"cannot tell the format; looked for {_LOOKED_FOR}; found {found}"
    return FormatError(path, "", f"{message}; name the format to read the file as one of these")
