"""Assay's own JSON for test suites and test labs: the models' JSON dump, nothing translated.

Files are parsed with the ``json`` module before validation rather than with ``model_validate_json``: the
kind (suite or lab) has to be read first anyway, and ``json`` reports syntax errors with line and column.
"""

from pathlib import Path
from typing import Any, Literal

from assay.formats.errors import FormatError, load_json, preview, validate, write_text
from assay.models import SCHEMA_VERSION, TestLab, TestSuite

Kind = Literal["suite", "lab"]


def _kind_of(data: Any, path: Path) -> Kind:
    if not isinstance(data, dict):
        raise FormatError(path, "", f"expected an Assay test suite or test lab object (got {preview(data)})")
    if "tests" in data:
        return "suite"
    if "rows" in data or "models" in data:
        return "lab"
    message = "expected an Assay test suite (with tests) or test lab (with models and rows)"
    raise FormatError(path, "", f"{message}; found keys {sorted(data)}")


def _check_version(data: dict[str, Any], path: Path) -> None:
    version = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        message = f"{version} was written by a newer Assay; this one reads up to {SCHEMA_VERSION}"
        raise FormatError(path, "schema_version", message)


def detect_kind(path: Path) -> Kind:
    """Whether an Assay JSON file holds a test suite or a test lab."""
    return _kind_of(load_json(path), path)


def import_native(path: Path) -> TestSuite | TestLab:
    data = load_json(path)
    kind = _kind_of(data, path)
    _check_version(data, path)
    return validate(TestSuite if kind == "suite" else TestLab, data, path)


def import_native_suite(path: Path) -> TestSuite:
    imported = import_native(path)
    if not isinstance(imported, TestSuite):
        raise FormatError(path, "", "expected a test suite, found a test lab")
    return imported


def import_native_lab(path: Path) -> TestLab:
    imported = import_native(path)
    if not isinstance(imported, TestLab):
        raise FormatError(path, "", "expected a test lab, found a test suite")
    return imported


def native_text(obj: TestSuite | TestLab) -> str:
    return obj.model_dump_json(indent=2) + "\n"


def export_native(obj: TestSuite | TestLab, path: Path) -> None:
    write_text(path, native_text(obj))
