"""DeepEval goldens and test cases as ``EvaluationDataset.save_as`` writes them: JSON, JSONL or CSV.

A golden is ``{input, actual_output, expected_output, retrieval_context, context, ...}``. ``input`` is the
prompt, ``actual_output`` the answer (a file with answers or retrieved passages imports as a lab),
``expected_output`` the expected answer. ``retrieval_context`` holds what the application retrieved and
``context`` the ideal passages, which become the case's reference contexts. In JSON both are lists; in CSV and
JSONL DeepEval joins them with ``|`` and its loaders split them on it again, as this reader does. A retrieved
passage that DeepEval saved with its source (``deepeval_source=S,deepeval_context=TEXT``) keeps the source as
its document id; every other passage gets the id of its text (`assay.formats.ragas.context_id`), so a
retrieved passage equal to a reference one counts as found by the retrieval evaluators.

Labels and bookkeeping (``name``, ``comments``, ``source_file``, ``additional_metadata``,
``custom_column_key_values``) are not test content and are not read. Tool calls, expected tools, token counts
and cost, and DeepEval ``expectations`` have no place in this import: each is listed as not mapped.
Conversational goldens (``scenario`` and ``turns``) are refused with that reason.
"""

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.formats.errors import FormatError, Locator, load_records, preview, stable_key, validate
from assay.formats.mlflow import FlatRecord, assemble
from assay.formats.options import ImportOptions
from assay.formats.ragas import context_id
from assay.formats.tables import csv_records
from assay.models import RetrievedChunk, TestCase, TestLab, TestSuite

DELIMITER = "|"
"""What DeepEval joins a list of passages with in CSV and JSONL files."""
_SOURCE_MARKER = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$", re.DOTALL)
_NOT_MAPPED = ("tools_called", "expected_tools", "token_cost", "input_token_count", "output_token_count",
               "expectations")  # fmt: skip


class _Golden(BaseModel):
    model_config = ConfigDict(extra="ignore")
    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    retrieval_context: Any = None
    context: Any = None


def _passages(golden: _Golden, field: str, path: Path, where: Locator) -> list[str]:
    """A list of passages, or DeepEval's ``|``-joined cell of them."""
    value = getattr(golden, field)
    if value is None:
        return []
    if isinstance(value, str):
        return value.split(DELIMITER)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    expected = f"expected a list of strings or one string of them joined by {DELIMITER!r}"
    raise FormatError(path, where((field,)), f"{expected} (got {preview(value)})")


def _retrieved(passages: list[str]) -> list[RetrievedChunk]:
    chunks = []
    for rank, passage in enumerate(passages):
        marked = _SOURCE_MARKER.match(passage)
        text = marked.group("context") if marked else passage
        uri = marked.group("source") if marked else context_id(text)
        chunks.append(RetrievedChunk(text=text, doc_uri=uri, rank=rank))
    return chunks


def _flat_record(index: int, raw: dict[str, Any], path: Path, where: Locator, options: ImportOptions) -> FlatRecord:
    if "input" not in raw and {"scenario", "turns"} & set(raw):
        message = "a conversational golden (scenario, turns): only single-turn goldens with an input are read"
        raise FormatError(path, where(()), message)
    golden = validate(_Golden, raw, path, where=where)
    for field in _NOT_MAPPED:
        if raw.get(field) not in (None, "", [], {}):
            options.note(f"{field} not mapped")
    references = _passages(golden, "context", path, where)
    case = TestCase(
        key=stable_key("deepeval", index, golden.input),
        prompt=golden.input,
        expected_output=golden.expected_output or "",
        reference_contexts=references,
        expected_retrieved_doc_uris=[context_id(text) for text in references],
    )
    retrieved = _retrieved(_passages(golden, "retrieval_context", path, where))
    return FlatRecord(case, golden.actual_output, retrieved)


def import_deepeval(path: Path, options: ImportOptions) -> TestSuite | TestLab:
    """Read ``.json``, ``.jsonl`` or ``.csv``; a lab (answered by ``options.model_key``) when goldens carry
    actual outputs or retrieval contexts."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl", ".csv"):
        raise FormatError(path, "", f"expected a .json, .jsonl or .csv file for deepeval (got {path.suffix!r})")
    located = csv_records(path, ("input",)) if suffix == ".csv" else load_records(path)
    records = [_flat_record(index, raw, path, where, options) for index, (where, raw) in enumerate(located)]
    return assemble(path.stem, records, options.model_key)
