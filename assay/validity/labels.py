"""Answers people labelled acceptable (1) or not (0), read from whatever a validator has at hand.

* A flat file, ``.jsonl`` (one object a line), ``.json`` (a list, or ``{"records": [...]}``) or ``.csv``:
  ``question``, ``context`` (a string or a list of strings; in CSV a JSON list or a plain string), ``answer``
  and ``label`` (1/0 or true/false), optional ``id``, ``expected_answer`` and ``group``; other keys are ignored.
* A test lab (Assay's or H2O Eval Studio's) whose test cases carry a ``label:1`` / ``label:0`` category
  (``assay.validity.lab_labels``).
* The labels a person gave in the MRM calibration step: an MRM run's export folder, its
  ``calibration/labels.json``, or an approvals file with a ``calibration`` section (``assay.validity.lab_labels``).

Whatever the source, the answers become one ``TestLab`` (so evaluators score them exactly as in a run) and each
row keeps its id, label and group. Every problem is a ``FormatError`` naming the file, the line (or JSON path)
and the field, and what was expected.
"""

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.formats.errors import FormatError, at_cell, load_json, load_records, preview, read_bytes
from assay.jsonio import strict_loads
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.models.steps import Step

FLAT_MODEL = ModelHost(key="labelled", type="testlab", name="Labelled answers")
"""The one "model" whose answers a flat file holds."""
REQUIRED_FIELDS = ("question", "context", "answer", "label")
OPTIONAL_FIELDS = ("id", "expected_answer", "group")
_TRUE, _FALSE = {"1", "true"}, {"0", "false"}

Where = Callable[[tuple[str, ...]], str]


@dataclass(frozen=True)
class LabelledRow:
    """One labelled answer: ``row`` is what the evaluators see."""

    id: str
    label: int
    group: str | None
    row: TestLabRow


@dataclass(frozen=True)
class LabelledSet:
    path: Path
    sha256: str
    source: str
    rows: list[LabelledRow]
    models: list[ModelHost]
    notes: tuple[str, ...] = ()

    def lab(self) -> TestLab:
        """The labelled answers as a test lab, in file order."""
        rows = [labelled.row for labelled in self.rows]
        return TestLab(name=f"labelled answers of {self.path.name}", models=self.models, rows=rows)

    @property
    def acceptable(self) -> int:
        return sum(row.label for row in self.rows)


def parse_label(value: Any) -> int | None:
    """1 or 0 from 1/0, 1.0/0.0, true/false (JSON or text, any case); None for anything else."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        return 1 if text in _TRUE else 0 if text in _FALSE else None
    return None


def label_error(path: Path, where: str, value: Any) -> FormatError:
    expected = "expected 1 (acceptable) or 0 (not acceptable), or true/false"
    return FormatError(path, where, f"{expected}; got {preview(value)}")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()


def load_labelled_set(path: Path, *, lab: Path | None = None) -> LabelledSet:
    """Read ``path`` as whichever source it is (see the module's docstring); ``lab`` is the test lab that
    calibration labels refer to, when it is not where an MRM run's export folder keeps it."""
    from assay.validity import lab_labels

    if path.is_dir():
        return lab_labels.from_run_folder(path, lab)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _flat_set(path, "csv", _csv_records(path))
    if suffix == ".jsonl":
        return _flat_set(path, "jsonl", _json_records(path, lines=True))
    data = load_json(path)
    if isinstance(data, list) and data and isinstance(data[0], dict) and "item_id" in data[0]:
        return lab_labels.from_review_labels(path, data, lab)
    if isinstance(data, dict) and Step.CALIBRATION in data:
        return lab_labels.from_approvals(path, lab)
    if isinstance(data, list) or (isinstance(data, dict) and "records" in data):
        return _flat_set(path, "json", _json_records(path, lines=False))
    return lab_labels.from_lab_file(path)


Record = tuple[Where, Mapping[str, Any], str]
"""A record, the locator naming its fields in errors, and the id it gets when it has none."""


def _json_records(path: Path, *, lines: bool) -> list[Record]:
    records = []
    for index, (where, record) in enumerate(load_records(path)):
        fallback = where(()).replace(" ", "-") if lines else f"record-{index + 1}"
        records.append((where, record, fallback))
    return records


def _csv_records(path: Path) -> list[Record]:
    from assay.formats.tables import read_csv

    header, rows = read_csv(path)
    missing = [name for name in REQUIRED_FIELDS if name not in header]
    if missing:
        raise FormatError(
            path,
            "line 1",
            f"the header lacks the column(s) {', '.join(missing)}; expected {', '.join(REQUIRED_FIELDS)} "
            f"and optionally {', '.join(OPTIONAL_FIELDS)} (found {preview(header, 80)})",
        )
    records = []
    for line, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        record = {name: _csv_cell(name, cell, path, line) for name, cell in zip(header, cells, strict=True)}
        records.append(((lambda loc, at=line: at_cell(at, loc)), record, f"line-{line}"))
    return records


def _csv_cell(name: str, cell: str, path: Path, line: int) -> Any:
    """A CSV cell as the JSON field it stands for: the context may be a JSON list; empty optional cells are unset."""
    if name == "context" and cell.lstrip().startswith("["):
        try:
            value = strict_loads(cell)
        except ValueError:
            return cell  # a plain string that happens to start with "[" (or that no JSON reader should trust)
        if not isinstance(value, list):
            return cell
        return value
    if name in OPTIONAL_FIELDS and not cell.strip():
        return None
    return cell


def _flat_set(path: Path, source: str, records: list[Record]) -> LabelledSet:
    rows: list[LabelledRow] = []
    first_at: dict[str, str] = {}
    for where, record, fallback in records:
        row = _flat_row(path, where, record, fallback)
        if row.id in first_at:
            raise FormatError(path, where(("id",)), f"id {row.id!r} is used twice (first at {first_at[row.id]})")
        first_at[row.id] = where(())
        rows.append(row)
    if not rows:
        raise FormatError(path, "", "no labelled answer in the file")
    return LabelledSet(path, file_sha256(path), source, rows, [FLAT_MODEL])


def _flat_row(path: Path, where: Where, record: Mapping[str, Any], fallback_id: str) -> LabelledRow:
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        expected = f"each record needs {', '.join(REQUIRED_FIELDS)}"
        raise FormatError(path, where((missing[0],)), f"missing; {expected}")
    label = parse_label(record["label"])
    if label is None:
        raise label_error(path, where(("label",)), record["label"])
    identifier = _text(path, where, record, "id", allow_number=True) or fallback_id
    case = TestCase(
        key=identifier,
        prompt=_text(path, where, record, "question"),
        expected_output=_text(path, where, record, "expected_answer"),
    )
    row = TestLabRow(
        test_case=case,
        model_key=FLAT_MODEL.key,
        actual_output=_text(path, where, record, "answer"),
        context=[RetrievedChunk(text=text, rank=rank) for rank, text in enumerate(_context(path, where, record))],
    )
    group = _text(path, where, record, "group", allow_number=True)
    return LabelledRow(identifier, label, group or None, row)


def _text(path: Path, where: Where, record: Mapping[str, Any], name: str, *, allow_number: bool = False) -> str:
    """A string field ("" when absent or null); ids and groups may be numbers."""
    value = record.get(name)
    if value is None:
        return ""
    if allow_number and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        kind = "a string or a number" if allow_number else "a string"
        raise FormatError(path, where((name,)), f"expected {kind}, got {preview(value)}")
    return value.strip() if allow_number else value


def _context(path: Path, where: Where, record: Mapping[str, Any]) -> list[str]:
    """The retrieved passages: one string, or a list of strings; empty passages are dropped."""
    value = record.get("context")
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item for item in value if item.strip()]
    raise FormatError(path, where(("context",)), f"expected a string or a list of strings, got {preview(value)}")
