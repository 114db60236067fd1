"""Ragas evaluation datasets (single-turn samples) as CSV, JSONL or a JSON list.

Columns: ``user_input`` (the prompt), ``response``, ``retrieved_contexts`` (list of strings), ``reference``
(the expected answer), ``reference_contexts`` and the optional ``retrieved_context_ids`` and
``reference_context_ids``. In CSV a list cell holds a JSON list or a Python list literal, which is what
``pandas.DataFrame.to_csv`` writes for list columns. An empty CSV cell counts as absent, so an empty response
cannot be told from a missing one there. CSV is read strictly (`assay.formats.tables`): an unbalanced quote is
an error naming its line, never rows merged into one.

Ragas 0.1 named the columns ``question``, ``answer``, ``contexts`` and ``ground_truth`` (before that a
``ground_truths`` list); they are read as the current ones (`LEGACY_COLUMNS`), and errors name them as written.

Ragas has no id column: keys are derived from the row position and the question, so re-importing the same
file gives the same keys. Reference contexts are kept as written (``TestCase.reference_contexts``). So that
Ragas's context precision/recall can be reproduced, every passage gets an id: the file's own
(``*_context_ids``) or else a hash of its text (``context_id``), so a retrieved chunk equal to a reference
context carries that context's id. Retrieved ids become the chunks' ``doc_uri``, reference ids the case's
``expected_retrieved_doc_uris``, which the retrieval evaluators (``document_recall``) compare. An export
writes ids only where they are not the text hashes a re-import would derive anyway. Suite-or-lab follows
the MLflow rule (see `assay.formats.mlflow.assemble`).
"""

import ast
import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.formats.errors import (
    FormatError,
    Locator,
    load_records,
    preview,
    stable_key,
    validate,
    write_json,
    write_jsonl,
    write_text,
)
from assay.formats.explain import Loc
from assay.formats.mlflow import FlatRecord, assemble, flatten
from assay.formats.tables import csv_records
from assay.jsonio import lone_surrogate, not_a_character
from assay.models import RetrievedChunk, TestCase, TestLab, TestSuite

LEGACY_COLUMNS = {"question": "user_input", "answer": "response", "contexts": "retrieved_contexts",
                  "ground_truth": "reference"}  # fmt: skip
"""Ragas 0.1's column names and the current ones they became (``ground_truths``, a list, is read as Ragas 0.1
reads it: its first item is the reference)."""
LIST_COLUMNS = ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids")
ID_PAIRS = (("retrieved_contexts", "retrieved_context_ids"), ("reference_contexts", "reference_context_ids"))
_SUFFIXES = (".csv", ".jsonl", ".json")


class _Sample(BaseModel):
    model_config = ConfigDict(extra="ignore")
    user_input: str
    response: str | None = None
    retrieved_contexts: list[str] = Field(default_factory=list)
    reference: str | None = None
    reference_contexts: list[str] = Field(default_factory=list)
    retrieved_context_ids: list[str] = Field(default_factory=list)
    reference_context_ids: list[str] = Field(default_factory=list)


def context_id(text: str) -> str:
    """A passage's id from its text (surrounding whitespace aside): equal passages get equal ids, in every
    file and every run, so a retrieved chunk is recognised as the reference context it repeats."""
    return "sha256:" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


def _ids(texts: list[str], given: list[str]) -> list[str]:
    return given if given else [context_id(text) for text in texts]


def parse_list_cell(text: str) -> list[str]:
    """A list of strings from a cell: JSON first, then a Python literal; ValueError when it is neither."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # a list nested a thousand levels deep is not a list cell
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ValueError(text) from None
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise ValueError(text)
    return list(value)


def _parse_list_fields(raw: dict[str, Any], path: Path, where: Locator) -> dict[str, Any]:
    parsed = dict(raw)
    for column in LIST_COLUMNS:
        if isinstance(raw.get(column), str):
            try:
                parsed[column] = parse_list_cell(raw[column])
            except ValueError:
                expected = "expected a JSON list of strings or a Python list literal"
                raise FormatError(path, where((column,)), f"{expected} (got {preview(raw[column])})") from None
            for index, text in enumerate(parsed[column]):
                if surrogate := lone_surrogate(text):  # "\ud800" in a cell's JSON or Python literal
                    raise FormatError(path, where((column, index)), not_a_character("the text", surrogate))
    return parsed


def _check_ids(sample: _Sample, path: Path, where: Locator) -> None:
    """Ids given next to texts name them one to one."""
    for texts_column, ids_column in ID_PAIRS:
        texts, ids = getattr(sample, texts_column), getattr(sample, ids_column)
        if texts and ids and len(texts) != len(ids):
            message = f"{len(ids)} ids for {len(texts)} {texts_column}; give one id per context"
            raise FormatError(path, where((ids_column,)), message)


def _ground_truth(value: Any, path: Path, where: Locator) -> str | None:
    """Ragas 0.1's rule for the deprecated ``ground_truths`` list: its first item is the reference."""
    try:
        truths = parse_list_cell(value) if isinstance(value, str) else value
    except ValueError:
        truths = None
    if not isinstance(truths, list) or not all(isinstance(truth, str) for truth in truths):
        raise FormatError(path, where(("ground_truths",)), f"expected a list of strings (got {preview(value)})")
    return truths[0] if truths else None


def _current_names(raw: dict[str, Any], path: Path, where: Locator) -> tuple[dict[str, Any], Locator]:
    """A Ragas 0.1 record renamed to the current columns, and a locator that names the file's own columns."""
    renamed: dict[str, Any] = {}
    written_as: dict[str, str] = {}
    for name, value in raw.items():
        current = LEGACY_COLUMNS.get(name)
        if current is not None and current not in raw:
            renamed[current], written_as[current] = value, name
        elif name == "ground_truths" and not {"ground_truth", "reference"} & set(raw):
            if (reference := _ground_truth(value, path, where)) is not None:
                renamed["reference"], written_as["reference"] = reference, name
        else:
            renamed[name] = value

    def located(loc: Loc) -> str:
        first = written_as.get(str(loc[0])) if loc else None
        return where((first, *loc[1:]) if first else loc)

    return renamed, located


def _flat_record(index: int, raw: dict[str, Any], path: Path, where: Locator) -> FlatRecord:
    raw, where = _current_names(raw, path, where)
    sample = validate(_Sample, _parse_list_fields(raw, path, where), path, where=where)
    _check_ids(sample, path, where)
    case = TestCase(
        key=stable_key("ragas", index, sample.user_input),
        prompt=sample.user_input,
        expected_output=sample.reference or "",
        reference_contexts=sample.reference_contexts,
        expected_retrieved_doc_uris=_ids(sample.reference_contexts, sample.reference_context_ids),
    )
    texts = sample.retrieved_contexts or [""] * len(sample.retrieved_context_ids)
    ids = _ids(texts, sample.retrieved_context_ids)
    context = [
        RetrievedChunk(text=text, doc_uri=uri, rank=rank)
        for rank, (text, uri) in enumerate(zip(texts, ids, strict=True))
    ]
    return FlatRecord(case, sample.response, context)


def import_ragas(path: Path, *, model_key: str = "imported") -> TestSuite | TestLab:
    """Read ``.csv``, ``.jsonl`` or ``.json``; a lab (answered by ``model_key``) when rows carry responses."""
    _check_suffix(path)
    located = csv_records(path, ("user_input", "question")) if path.suffix.lower() == ".csv" else load_records(path)
    records = [_flat_record(index, raw, path, where) for index, (where, raw) in enumerate(located)]
    return assemble(path.stem, records, model_key)


def _written_ids(texts: list[str], ids: list[str]) -> list[str] | None:
    """The ids to write next to ``texts``: none where a re-import derives the same ones from the texts."""
    return None if ids == [context_id(text) for text in texts] else ids


def to_samples(records: list[FlatRecord], with_outputs: bool) -> list[dict[str, Any]]:
    """Ragas samples; ``with_outputs`` adds the retrieved contexts and (when answered) the response. Reference
    contexts and ids are written where the case has them."""
    samples = []
    for record in records:
        case = record.case
        sample: dict[str, Any] = {"user_input": case.prompt}
        if with_outputs:
            sample["retrieved_contexts"] = [chunk.text for chunk in record.context]
            ids = [chunk.doc_uri or context_id(chunk.text) for chunk in record.context]
            if (retrieved_ids := _written_ids(sample["retrieved_contexts"], ids)) is not None:
                sample["retrieved_context_ids"] = retrieved_ids
            if record.answer is not None:
                sample["response"] = record.answer
        sample["reference"] = case.expected_output
        if case.reference_contexts:
            sample["reference_contexts"] = list(case.reference_contexts)
        if reference_ids := _written_ids(case.reference_contexts, list(case.expected_retrieved_doc_uris)):
            sample["reference_context_ids"] = reference_ids
        samples.append(sample)
    return samples


_CSV_COLUMNS = (
    "user_input",
    "retrieved_contexts",
    "retrieved_context_ids",
    "response",
    "reference",
    "reference_contexts",
    "reference_context_ids",
)


def _csv_text(samples: list[dict[str, Any]], with_outputs: bool) -> str:
    required = {"user_input", "reference"} | ({"retrieved_contexts", "response"} if with_outputs else set())
    present = required | {name for sample in samples for name in sample}
    columns = [name for name in _CSV_COLUMNS if name in present]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for sample in samples:
        cells = {name: json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value
                 for name, value in sample.items()}  # fmt: skip
        writer.writerow(cells)
    return buffer.getvalue()


def export_ragas(obj: TestSuite | TestLab, path: Path, *, model_key: str | None = None) -> None:
    """Write CSV, JSONL or JSON by the file's extension; list cells in CSV are JSON-encoded."""
    _check_suffix(path)
    with_outputs = isinstance(obj, TestLab)
    samples = to_samples(flatten(obj, path, model_key), with_outputs)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_text(path, _csv_text(samples, with_outputs))
    elif suffix == ".jsonl":
        write_jsonl(path, samples)
    else:
        write_json(path, samples)


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in _SUFFIXES:
        raise FormatError(path, "", f"expected a .csv, .jsonl or .json file for ragas (got {path.suffix!r})")
