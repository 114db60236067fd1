"""H2O Eval Studio's Test Suite and Test Lab JSON <-> `TestSuite` / `TestLab`.

Mapping decisions:

* Keys missing from a file are derived from the suite name and positions (`stable_key`), so importing the
  same file twice gives the same keys.
* A Test Lab's ``dataset`` holds the resolved answers and is what we read; ``raw_dataset`` (the same inputs
  before they were answered) is only read when ``dataset`` is absent. Export writes both.
* ``models[].connection`` is an Eval Studio connection id, not a URL, so it goes to
  ``ModelHost.settings["connection"]``; any other unknown key of a model (``collection_id``, ``documents``,
  ``model_cfg``...) goes to ``settings`` too and is written back at the top level of the model.
* A row's ``corpus`` is the documents of its model's RAG collection; `TestLabRow` has no place for it, so it
  is kept as ``settings["documents"]`` of the model when the model does not list its documents itself.
* ``actual_output_meta`` (colouring hints for Eval Studio's report) is not kept.
* Test case fields Eval Studio does not know (turns, variables, guidelines...) and row fields (error,
  attempts, tool_calls) are written as extra keys only when set, so Assay data round-trips exactly.
"""

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, FiniteFloat

from assay.formats.errors import FormatError, json_path, load_json, preview, stable_key, validate, write_json
from assay.models import (
    Assertion,
    ConversationTurn,
    ModelHost,
    Relationship,
    RetrievedChunk,
    Test,
    TestCase,
    TestLab,
    TestLabRow,
    TestSuite,
    ToolCall,
)

_ASSAY_CASE_FIELDS = {
    "turns",
    "variables",
    "guidelines",
    "expected_retrieved_doc_uris",
    "sources",
    "assertions",
    "response_format",
    "weight",
    "topic",
    "generator",
}
_ROW_ANSWER_FIELDS = {"actual_output", "actual_duration", "cost"}
_ROW_RESULT_FIELDS = {"input_tokens", "output_tokens", "error", "attempts", "tool_calls"}
_MODEL_KEYS = {"key", "model_type", "name", "llm_model_name", "connection", "url", "secret_ref"}
_LENIENT = ConfigDict(extra="ignore")  # Eval Studio versions add keys; unknown ones must not block an import


class _WireRelationship(BaseModel):
    model_config = _LENIENT
    type: str
    target: str


class _CaseFields(BaseModel):
    """Test case fields shared by a suite's test cases and a lab's inputs."""

    model_config = _LENIENT
    expected_output: str = ""
    output_condition: str = ""
    categories: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    relationships: list[_WireRelationship] = Field(default_factory=list)
    turns: list[ConversationTurn] = Field(default_factory=list)
    variables: dict[str, str] = Field(default_factory=dict)
    guidelines: list[str] = Field(default_factory=list)
    expected_retrieved_doc_uris: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    assertions: list[Assertion] = Field(default_factory=list)
    response_format: Literal["text", "json"] = "text"
    weight: FiniteFloat = Field(default=1.0, ge=0, le=1)
    topic: str | None = None
    generator: str | None = None

    def to_case(self, key: str, prompt: str) -> TestCase:
        fields = self.model_dump(include=set(_CaseFields.model_fields) - {"relationships"})
        relationships = [Relationship(type=link.type, target=link.target) for link in self.relationships]
        return TestCase(key=key, prompt=prompt, relationships=relationships, **fields)


class _WireCase(_CaseFields):
    key: str | None = None
    prompt: str


class _WireTest(BaseModel):
    model_config = _LENIENT
    key: str | None = None
    name: str = ""
    description: str = ""
    documents: list[str] = Field(default_factory=list)
    test_cases: list[_WireCase] = Field(default_factory=list)


class _WireSuite(BaseModel):
    model_config = _LENIENT
    name: str | None = None
    description: str = ""
    tests: list[_WireTest]


class _WireChunk(BaseModel):
    model_config = _LENIENT
    text: str = Field(validation_alias=AliasChoices("text", "content", "chunk", "page_content"))
    doc_uri: str = Field(default="", validation_alias=AliasChoices("doc_uri", "uri", "source", "url"))
    rank: int | None = Field(default=None, ge=0)
    score: FiniteFloat | None = None


class _WireInput(_CaseFields):
    key: str | None = None
    test_key: str | None = None
    test_case_key: str | None = None
    input: str
    corpus: list[str] = Field(default_factory=list)
    context: list[Any] = Field(default_factory=list, description="a list of strings or objects with text")
    actual_output: str | None = None
    actual_duration: FiniteFloat | None = Field(default=None, ge=0)
    cost: FiniteFloat | None = Field(default=None, ge=0)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    model_key: str
    error: str | None = None
    attempts: int = Field(default=1, ge=0)
    tool_calls: list[ToolCall] = Field(default_factory=list)


class _WireDataset(BaseModel):
    model_config = _LENIENT
    inputs: list[_WireInput]


class _WireModel(BaseModel):
    model_config = ConfigDict(extra="allow")  # extras become ModelHost.settings
    key: str = Field(min_length=1)
    model_type: str = Field(min_length=1)
    name: str = ""
    llm_model_name: str = ""
    connection: str | None = None
    url: str = ""
    secret_ref: str | None = None


class _WireLab(BaseModel):
    model_config = _LENIENT
    name: str | None = None
    description: str = ""
    models: list[_WireModel]


def import_suite(path: Path) -> TestSuite:
    wire = validate(_WireSuite, load_json(path), path)
    name = wire.name or path.stem
    first_use: dict[str, str] = {}
    tests = []
    for test_index, wire_test in enumerate(wire.tests):
        cases = []
        for case_index, wire_case in enumerate(wire_test.test_cases):
            key = wire_case.key or stable_key(name, test_index, case_index)
            where = json_path("tests", test_index, "test_cases", case_index, "key")
            if key in first_use:
                raise FormatError(path, where, f"duplicate key {key!r} (first used at {first_use[key]})")
            first_use[key] = where
            cases.append(wire_case.to_case(key, wire_case.prompt))
        test_fields = wire_test.model_dump(include={"name", "description", "documents"})
        tests.append(Test(key=wire_test.key or stable_key(name, test_index), test_cases=cases, **test_fields))
    return TestSuite(name=name, description=wire.description, tests=tests)


def _case_json(case: TestCase) -> dict[str, Any]:
    data: dict[str, Any] = {
        "categories": case.categories,
        "relationships": [link.model_dump() for link in case.relationships],
        "expected_output": case.expected_output,
        "output_condition": case.output_condition,
        "constraints": case.constraints,
    }
    return data | case.model_dump(include=_ASSAY_CASE_FIELDS, exclude_defaults=True)


def suite_to_json(suite: TestSuite) -> dict[str, Any]:
    tests = [
        test.model_dump(include={"key", "name", "description", "documents"})
        | {"test_cases": [{"key": c.key, "prompt": c.prompt} | _case_json(c) for c in test.test_cases]}
        for test in suite.tests
    ]
    return {"name": suite.name, "description": suite.description, "tests": tests}


def export_suite(suite: TestSuite, path: Path) -> None:
    write_json(path, suite_to_json(suite))


def _chunks(items: list[Any], path: Path, where: str) -> list[RetrievedChunk]:
    chunks = []
    for rank, item in enumerate(items):
        if isinstance(item, str):
            chunks.append(RetrievedChunk(text=item, rank=rank))
        elif isinstance(item, dict):
            wire = validate(_WireChunk, item, path, where=lambda loc, i=rank: json_path(where, i, *loc))
            fields = wire.model_dump(exclude={"rank"})
            chunks.append(RetrievedChunk(rank=rank if wire.rank is None else wire.rank, **fields))
        else:
            message = f"expected a string or an object with text (got {preview(item)})"
            raise FormatError(path, json_path(where, rank), message)
    return chunks


def _host(wire: _WireModel, documents: list[str]) -> ModelHost:
    settings = dict(wire.model_extra or {})
    if wire.connection:
        settings["connection"] = wire.connection
    if documents and "documents" not in settings:
        settings["documents"] = documents
    fields = wire.model_dump(include={"key", "name", "llm_model_name", "url", "secret_ref"})
    return ModelHost(type=wire.model_type, settings=settings, **fields)


def import_lab(path: Path) -> TestLab:
    data = load_json(path)
    wire = validate(_WireLab, data, path)
    if "dataset" in data and data["dataset"] is None:
        # An explicit null is a lab whose answers were lost, not a lab to read from its unanswered inputs.
        raise FormatError(path, "dataset", "is null; expected an object with inputs (leave the key out to read "
                                           "raw_dataset, the inputs without answers)")  # fmt: skip
    section = "dataset" if "dataset" in data else "raw_dataset"
    raw = data.get(section)
    if raw is None:
        raise FormatError(path, "dataset", "field required (expected an object with inputs)")
    dataset = validate(_WireDataset, raw, path, where=lambda loc: json_path(section, *loc))
    first_use: dict[str, int] = {}
    for index, model in enumerate(wire.models):
        if first_use.setdefault(model.key, index) != index:
            raise FormatError(path, json_path("models", index, "key"), f"duplicate model key {model.key!r}")
    corpus: dict[str, list[str]] = {key: [] for key in first_use}
    rows: list[TestLabRow] = []
    seen_rows: set[tuple[str, str]] = set()
    for index, item in enumerate(dataset.inputs):
        where = json_path(section, "inputs", index)
        if item.model_key not in corpus:
            known = sorted(corpus)
            message = f"{item.model_key!r} is not one of models[].key {known}"
            raise FormatError(path, json_path(where, "model_key"), message)
        case_key = item.test_case_key or item.key or stable_key(wire.name or path.stem, "inputs", index)
        if (item.model_key, case_key) in seen_rows:
            message = f"test case {case_key!r} is answered twice by model {item.model_key!r}"
            raise FormatError(path, where, message)
        seen_rows.add((item.model_key, case_key))
        corpus[item.model_key] += [uri for uri in item.corpus if uri not in corpus[item.model_key]]
        row_fields = item.model_dump(include=_ROW_RESULT_FIELDS | _ROW_ANSWER_FIELDS)
        rows.append(
            TestLabRow(
                test_case=item.to_case(case_key, item.input),
                test_key=item.test_key or "",
                model_key=item.model_key,
                context=_chunks(item.context, path, json_path(where, "context")),
                **row_fields,
            )
        )
    models = [_host(model, corpus[model.key]) for model in wire.models]
    return TestLab(name=wire.name or path.stem, description=wire.description, models=models, rows=rows)


def _context_json(chunks: list[RetrievedChunk]) -> list[Any]:
    plain = all(not c.doc_uri and c.score is None and c.rank == rank for rank, c in enumerate(chunks))
    return [chunk.text for chunk in chunks] if plain else [chunk.model_dump() for chunk in chunks]


def _input_json(row: TestLabRow, documents: list[str]) -> dict[str, Any]:
    case = row.test_case
    data: dict[str, Any] = {
        "key": case.key,
        "test_key": row.test_key,
        "test_case_key": case.key,
        "input": case.prompt,
        "corpus": documents,
        "context": _context_json(row.context),
    }
    data |= _case_json(case)
    data |= {
        "actual_output": row.actual_output,
        "actual_duration": row.actual_duration,
        "cost": row.cost,
        "model_key": row.model_key,
    }
    return data | row.model_dump(include=_ROW_RESULT_FIELDS, exclude_defaults=True)


def _model_json(host: ModelHost, index: int) -> dict[str, Any]:
    clashes = sorted((set(host.settings) - {"connection"}) & _MODEL_KEYS)
    if clashes:
        raise ValueError(f"models[{index}].settings uses {clashes}, which are Eval Studio model fields")
    data = {
        "connection": host.settings.get("connection", ""),
        "model_type": host.type,
        "name": host.name,
        "llm_model_name": host.llm_model_name,
        "key": host.key,
    }
    extras = {"url": host.url, "secret_ref": host.secret_ref} if host.url or host.secret_ref else {}
    return data | extras | {key: value for key, value in host.settings.items() if key != "connection"}


def _documents(host: ModelHost) -> list[str]:
    documents = host.settings.get("documents")
    return list(documents) if isinstance(documents, list) else []


def lab_to_json(lab: TestLab) -> dict[str, Any]:
    documents = {host.key: _documents(host) for host in lab.models}
    resolved = [_input_json(row, documents[row.model_key]) for row in lab.rows]
    unresolved = [
        {key: value for key, value in item.items() if key not in _ROW_RESULT_FIELDS}
        | {"context": [], "actual_output": "", "actual_duration": 0.0, "cost": 0.0}
        for item in resolved
    ]
    llm_names = list(dict.fromkeys(host.llm_model_name for host in lab.models if host.llm_model_name))
    return {
        "name": lab.name,
        "description": lab.description,
        "raw_dataset": {"inputs": unresolved},
        "dataset": {"inputs": resolved},
        "models": [_model_json(host, index) for index, host in enumerate(lab.models)],
        "llm_model_names": llm_names,
    }


def export_lab(lab: TestLab, path: Path) -> None:
    try:
        data = lab_to_json(lab)
    except ValueError as error:
        raise FormatError(path, "", str(error)) from None
    write_json(path, data)
