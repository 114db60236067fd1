"""Databricks / MLflow evaluation sets (``mlflow.evaluate`` ``data``) as JSON or JSONL.

A record is ``{request_id, request, response, expected_response, retrieved_context: [{content, doc_uri}],
expected_retrieved_context: [{doc_uri}], guidelines}``; unknown keys (``trace``, ``expected_facts``...) are
ignored. ``request`` is a string or a chat request ``{"messages": [...]}``: its last message must come from
the user and becomes the prompt, the earlier ones become the case's conversation turns. Named guidelines
(``{"tone": [...], "facts": [...]}``) are flattened in file order.

A file whose records carry outputs (``response`` or ``retrieved_context``) imports as a `TestLab` with one
model; otherwise as a `TestSuite`. Both are named after the file. The flat-record helpers here are shared
with the Ragas format, which has the same one-record-per-case shape.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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
)
from assay.models import (
    ConversationTurn,
    ModelHost,
    RetrievedChunk,
    Test,
    TestCase,
    TestLab,
    TestLabRow,
    TestSuite,
)

IMPORTED_HOST_TYPE = "imported"
"""`ModelHost.type` of a model whose answers came from a file rather than from a registered host."""

_LENIENT = ConfigDict(extra="ignore")


@dataclass(frozen=True)
class FlatRecord:
    """One test case with, optionally, one model's output for it: a row of a flat evaluation set."""

    case: TestCase
    answer: str | None = None
    context: list[RetrievedChunk] = field(default_factory=list)

    @property
    def has_output(self) -> bool:
        return self.answer is not None or bool(self.context)


def assemble(name: str, records: list[FlatRecord], model_key: str) -> TestSuite | TestLab:
    """A lab answered by ``model_key`` when any record has an output, else a single-test suite."""
    if any(record.has_output for record in records):
        rows = [
            TestLabRow(
                test_case=record.case,
                model_key=model_key,
                actual_output=record.answer,
                context=record.context,
            )
            for record in records
        ]
        return TestLab(name=name, models=[ModelHost(key=model_key, type=IMPORTED_HOST_TYPE)], rows=rows)
    test = Test(key=stable_key(name), name=name, test_cases=[record.case for record in records])
    return TestSuite(name=name, tests=[test])


def flatten(obj: TestSuite | TestLab, path: Path, model_key: str | None = None) -> list[FlatRecord]:
    """The records to export; a lab with several models needs ``model_key`` since a flat set holds one."""
    if isinstance(obj, TestSuite):
        return [FlatRecord(case) for _, case in obj.cases()]
    keys = [model.key for model in obj.models]
    if model_key is None and len(keys) != 1:
        raise FormatError(
            path, "", f"the lab has models {keys}; choose one with --model-key (one model per file)"
        )
    chosen = keys[0] if model_key is None else model_key
    if chosen not in keys:
        raise FormatError(path, "", f"model_key {chosen!r} is not one of the lab's models {keys}")
    return [FlatRecord(row.test_case, row.actual_output, row.context) for row in obj.rows_for(chosen)]


class _Message(BaseModel):
    model_config = _LENIENT
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class _ChatRequest(BaseModel):
    model_config = _LENIENT
    messages: list[_Message] = Field(min_length=1)


class _ChatRecord(BaseModel):
    model_config = _LENIENT
    request: _ChatRequest


class _GuidelineList(BaseModel):
    guidelines: list[str]


class _NamedGuidelines(BaseModel):
    guidelines: dict[str, list[str]]


class RetrievedContext(BaseModel):
    """A passage as MLflow evaluation sets record it (both the older shape and MLflow 3 GenAI datasets)."""

    model_config = _LENIENT
    content: str = ""
    doc_uri: str = ""


class _DocRef(BaseModel):
    model_config = _LENIENT
    doc_uri: str


class _Record(BaseModel):
    model_config = _LENIENT
    request_id: str | None = None
    request: Any = Field(description="a string or an object with messages")
    response: str | None = None
    expected_response: str | None = None
    retrieved_context: list[RetrievedContext] = Field(default_factory=list)
    expected_retrieved_context: list[_DocRef] = Field(default_factory=list)
    guidelines: Any = None


def _prompt_and_turns(
    record: _Record, raw: dict[str, Any], path: Path, where: Locator
) -> tuple[str, list[ConversationTurn]]:
    if isinstance(record.request, str):
        return record.request, []
    if not isinstance(record.request, dict):
        message = f"expected a string or an object with messages (got {preview(record.request)})"
        raise FormatError(path, where(("request",)), message)
    messages = validate(_ChatRecord, raw, path, where=where).request.messages
    if messages[-1].role != "user":
        location = where(("request", "messages", len(messages) - 1, "role"))
        raise FormatError(
            path, location, f"expected the last message from the user (got {messages[-1].role!r})"
        )
    turns = [ConversationTurn(role=message.role, content=message.content) for message in messages[:-1]]
    return messages[-1].content, turns


def _guidelines(record: _Record, raw: dict[str, Any], path: Path, where: Locator) -> list[str]:
    if record.guidelines is None:
        return []
    if isinstance(record.guidelines, dict):
        named = validate(_NamedGuidelines, raw, path, where=where).guidelines
        return [guideline for group in named.values() for guideline in group]
    return validate(_GuidelineList, raw, path, where=where).guidelines


def _flat_record(index: int, raw: dict[str, Any], path: Path, where: Locator) -> FlatRecord:
    record = validate(_Record, raw, path, where=where)
    prompt, turns = _prompt_and_turns(record, raw, path, where)
    case = TestCase(
        key=record.request_id or stable_key("mlflow", index, prompt),
        prompt=prompt,
        turns=turns,
        expected_output=record.expected_response or "",
        guidelines=_guidelines(record, raw, path, where),
        expected_retrieved_doc_uris=[ref.doc_uri for ref in record.expected_retrieved_context],
    )
    context = [
        RetrievedChunk(text=chunk.content, doc_uri=chunk.doc_uri, rank=rank)
        for rank, chunk in enumerate(record.retrieved_context)
    ]
    return FlatRecord(case, record.response, context)


def _check_unique_ids(records: list[FlatRecord], locators: list[Locator], path: Path) -> None:
    """A ``request_id`` used twice would make two test cases share a key; name the second use."""
    seen: set[str] = set()
    for record, where in zip(records, locators, strict=True):
        if record.case.key in seen:
            raise FormatError(path, where(("request_id",)), f"duplicate key {record.case.key!r}")
        seen.add(record.case.key)


def import_mlflow(path: Path, *, model_key: str = "imported") -> TestSuite | TestLab:
    """Read a ``.json`` (a list of records or ``{"records": [...]}``) or ``.jsonl`` evaluation set."""
    _check_suffix(path)
    located = load_records(path)
    records = [_flat_record(index, raw, path, where) for index, (where, raw) in enumerate(located)]
    _check_unique_ids(records, [where for where, _ in located], path)
    return assemble(path.stem, records, model_key)


def to_records(records: list[FlatRecord]) -> list[dict[str, Any]]:
    out = []
    for record in records:
        case = record.case
        messages = [{"role": turn.role, "content": turn.content} for turn in case.turns]
        messages.append({"role": "user", "content": case.prompt})
        request = {"messages": messages} if case.turns else case.prompt
        data: dict[str, Any] = {"request_id": case.key, "request": request}
        if record.answer is not None:
            data["response"] = record.answer
        if record.context:
            data["retrieved_context"] = [
                {"content": chunk.text} | ({"doc_uri": chunk.doc_uri} if chunk.doc_uri else {})
                for chunk in record.context
            ]
        if case.expected_output:
            data["expected_response"] = case.expected_output
        if case.expected_retrieved_doc_uris:
            data["expected_retrieved_context"] = [
                {"doc_uri": uri} for uri in case.expected_retrieved_doc_uris
            ]
        if case.guidelines:
            data["guidelines"] = case.guidelines
        out.append(data)
    return out


def export_mlflow(obj: TestSuite | TestLab, path: Path, *, model_key: str | None = None) -> None:
    """Write JSON (a list of records) or JSONL, by the file's extension."""
    _check_suffix(path)
    records = to_records(flatten(obj, path, model_key))
    if path.suffix.lower() == ".jsonl":
        write_jsonl(path, records)
    else:
        write_json(path, records)


def _check_suffix(path: Path) -> None:
    if path.suffix.lower() not in (".json", ".jsonl"):
        raise FormatError(path, "", f"expected a .json or .jsonl file for mlflow (got {path.suffix!r})")
