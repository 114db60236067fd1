"""MLflow 3 GenAI evaluation datasets (``mlflow.genai.datasets``, ``mlflow.genai.evaluate(data=...)``).

A record is ``{inputs, outputs, expectations, tags, dataset_record_id, ...}``, as ``DatasetRecord.to_dict()``
writes it; files are a JSON list, ``{"records": [...]}`` (``EvaluationDataset.to_dict()``), JSONL, or the
``to_df()`` frame saved by pandas (``to_json(orient="records")``, ``lines=True`` or ``to_csv()``, whose cells
hold Python literals such as ``{'question': '...'}``).

``inputs`` holds the question: ``messages`` (a chat: the last user message is the prompt, earlier ones the
conversation turns) or the field `assay.formats.prompt_field` picks; other inputs become text variables.
``outputs`` is the answer: a string, an object with ``response`` (or ``output``, ``answer``, ``content``,
``text``), a chat completion (``choices``) or ``messages``, with ``retrieved_context`` beside it; MLflow's
``mlflow_wrapped`` envelope is opened. Expectations: ``expected_response`` is the expected output, else the
``expected_facts`` one a line (the facts a correct answer states, as Assay's correctness judge wants them);
``guidelines`` (a list, a string or named lists) and ``expected_retrieved_context`` (``doc_uri`` each) are
kept; any other expectation is listed as not mapped. Tags become ``key:value`` categories.
"""

import ast
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.formats.errors import FormatError, Locator, load_records, preview, stable_key, validate
from assay.formats.mlflow import FlatRecord, RetrievedContext, assemble
from assay.formats.options import ImportOptions
from assay.formats.prompt_field import no_prompt_field, prompt_field, var_text
from assay.formats.tables import csv_records
from assay.models import ConversationTurn, RetrievedChunk, TestCase, TestLab, TestSuite

_LENIENT = ConfigDict(extra="ignore")
_OBJECT_COLUMNS = ("inputs", "expectations", "tags")
_ANSWER_KEYS = ("response", "output", "answer", "content", "text")
_WRAPPED = "mlflow_wrapped"  # MLflow's key for a non-object output stored in an object column
_KNOWN_EXPECTATIONS = {"expected_response", "expected_facts", "guidelines", "expected_retrieved_context"}


class _Message(BaseModel):
    model_config = _LENIENT
    role: str
    content: str | None = None


class _Record(BaseModel):
    model_config = _LENIENT
    dataset_record_id: str | None = None
    inputs: dict[str, Any] = Field(description="an object with the question (question, messages...)")
    outputs: Any = None
    expectations: dict[str, Any] | None = None
    tags: dict[str, Any] | None = None


class _Outputs(BaseModel):
    model_config = _LENIENT
    retrieved_context: list[RetrievedContext] = Field(default_factory=list)


class _Expectations(BaseModel):
    model_config = _LENIENT
    expected_response: str | None = None
    expected_facts: list[str] = Field(default_factory=list)
    guidelines: list[str] | str | dict[str, list[str]] | None = None
    expected_retrieved_context: list[RetrievedContext] = Field(default_factory=list)


def _chat(messages: Any, path: Path, where: Locator, field: tuple[str, ...]) -> tuple[str, list[ConversationTurn]]:
    """The last user message as the prompt and the messages before it as the conversation."""
    if not isinstance(messages, list) or not messages:
        raise FormatError(path, where(field), f"expected a non-empty list of messages (got {preview(messages)})")
    parsed = [validate(_Message, message, path, where=lambda loc, i=i: where((*field, i, *loc)))
              for i, message in enumerate(messages)]  # fmt: skip
    last = parsed[-1]
    if last.role != "user" or last.content is None:
        message = f"expected the last message to be the user's question (got role {last.role!r})"
        raise FormatError(path, where((*field, len(parsed) - 1, "role")), message)
    turns = []
    for index, message in enumerate(parsed[:-1]):
        if message.role not in ("system", "user", "assistant", "tool"):
            raise FormatError(path, where((*field, index, "role")), f"unknown role {message.role!r}")
        turns.append(ConversationTurn(role=message.role, content=message.content or ""))  # type: ignore[arg-type]
    return last.content, turns


def _question(
    record: _Record, path: Path, where: Locator, options: ImportOptions
) -> tuple[str, list[ConversationTurn], dict[str, str]]:
    """The prompt, the conversation before it and the other inputs as text variables."""
    inputs = record.inputs
    if options.prompt_var is None and "messages" in inputs:
        name = "messages"
    elif (name := prompt_field(set(inputs), options.prompt_var)) is None:
        raise FormatError(path, where(("inputs",)), no_prompt_field(set(inputs), options.prompt_var, "inputs"))
    value = inputs[name]
    if isinstance(value, str):
        prompt, turns = value, []
    elif isinstance(value, list):
        prompt, turns = _chat(value, path, where, ("inputs", name))
    else:
        raise FormatError(path, where(("inputs", name)), f"expected a string or messages (got {preview(value)})")
    variables = {key: var_text(item) for key, item in inputs.items() if key != name}
    return prompt, turns, variables


def _answer(outputs: Any, path: Path, where: Locator) -> tuple[str | None, list[RetrievedChunk]]:
    if isinstance(outputs, dict) and set(outputs) == {_WRAPPED}:
        outputs = outputs[_WRAPPED]
    if outputs is None or isinstance(outputs, str):
        return outputs, []
    if not isinstance(outputs, dict):
        raise FormatError(path, where(("outputs",)), f"expected a string or an object (got {preview(outputs)})")
    chunks = validate(_Outputs, outputs, path, where=lambda loc: where(("outputs", *loc))).retrieved_context
    context = [
        RetrievedChunk(text=chunk.content, doc_uri=chunk.doc_uri, rank=rank) for rank, chunk in enumerate(chunks)
    ]
    if answer := next((outputs[key] for key in _ANSWER_KEYS if isinstance(outputs.get(key), str)), None):
        return answer, context
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return message["content"], context
    if isinstance(outputs.get("messages"), list):
        replies = [
            m.get("content") for m in outputs["messages"] if isinstance(m, dict) and m.get("role") == "assistant"
        ]
        if replies and isinstance(replies[-1], str):
            return replies[-1], context
    if context and not set(outputs) - {"retrieved_context"}:
        return None, context
    expected = f"an answer under one of {list(_ANSWER_KEYS)}, choices or messages"
    raise FormatError(path, where(("outputs",)), f"expected {expected} (found keys {sorted(outputs)})")


def _guidelines(given: list[str] | str | dict[str, list[str]] | None) -> list[str]:
    if given is None:
        return []
    if isinstance(given, str):
        return [given]
    if isinstance(given, dict):
        return [guideline for group in given.values() for guideline in group]
    return given


def _flat_record(index: int, raw: dict[str, Any], path: Path, where: Locator, options: ImportOptions) -> FlatRecord:
    record = validate(_Record, raw, path, where=where)
    prompt, turns, variables = _question(record, path, where, options)
    expectations = record.expectations or {}
    expected = validate(_Expectations, expectations, path, where=lambda loc: where(("expectations", *loc)))
    for key in sorted(set(expectations) - _KNOWN_EXPECTATIONS):
        options.note(f"expectations.{key} not mapped")
    if expected.expected_response is not None and expected.expected_facts:
        options.note("expectations.expected_facts not mapped where expected_response is given (the response is kept)")
    case = TestCase(
        key=record.dataset_record_id or stable_key("mlflow-genai", index, prompt),
        prompt=prompt,
        turns=turns,
        variables=variables,
        expected_output=expected.expected_response or "\n".join(expected.expected_facts),
        guidelines=_guidelines(expected.guidelines),
        expected_retrieved_doc_uris=[item.doc_uri for item in expected.expected_retrieved_context if item.doc_uri],
        categories=[f"{key}:{var_text(value)}" for key, value in (record.tags or {}).items()],
    )
    answer, context = _answer(record.outputs, path, where)
    return FlatRecord(case, answer, context)


def _cell_value(text: str, column: str, path: Path, where: Locator) -> Any:
    """A cell of a ``to_df().to_csv()`` export: JSON, else the Python literal pandas wrote for a dict."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        if column == "outputs":
            return text  # a plain-text answer
        expected = "expected a JSON object or a Python dict literal"
        raise FormatError(path, where((column,)), f"{expected} (got {preview(text)})") from None


def _csv_records(path: Path) -> list[tuple[Locator, dict[str, Any]]]:
    located = []
    for where, cells in csv_records(path, ("inputs",)):
        record: dict[str, Any] = dict(cells)
        for column in (*_OBJECT_COLUMNS, "outputs"):
            if column in cells:
                record[column] = _cell_value(cells[column], column, path, where)
        located.append((where, record))
    return located


def import_mlflow_genai(path: Path, options: ImportOptions) -> TestSuite | TestLab:
    """Read ``.json``, ``.jsonl`` or ``.csv``; a lab (answered by ``options.model_key``) when records have outputs."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl", ".csv"):
        raise FormatError(path, "", f"expected a .json, .jsonl or .csv file for mlflow-genai (got {path.suffix!r})")
    located = _csv_records(path) if suffix == ".csv" else load_records(path)
    records = [_flat_record(index, raw, path, where, options) for index, (where, raw) in enumerate(located)]
    seen: set[str] = set()
    for record, (where, _) in zip(records, located, strict=True):
        if record.case.key in seen:
            raise FormatError(path, where(("dataset_record_id",)), f"duplicate key {record.case.key!r}")
        seen.add(record.case.key)
    return assemble(path.stem, records, options.model_key)
