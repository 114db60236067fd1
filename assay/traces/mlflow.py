"""MLflow traces as MLflow writes them: ``Trace.to_json()`` (``{"info": {...}, "data": {"spans": [...]}}``), a JSON
list of them or one a line (JSON Lines). MLflow 2's shape (``info.request_id``; spans with a ``context``, hex ids)
and the trace data MLflow stores as an artifact (``{"spans": [...]}``) are read too.

MLflow records what the mapping needs under its own attribute names, each value JSON-encoded; the reader copies
them to the OpenInference names: ``mlflow.spanType`` (CHAT_MODEL and LLM are LLM) is the kind;
``mlflow.spanInputs``/``mlflow.spanOutputs`` are ``input.value``/``output.value``; a retriever's outputs, MLflow
``Document``s, are the retrieved documents (``metadata.doc_uri``, else ``id``, names them);
``mlflow.chat.tokenUsage``, ``mlflow.llm.model`` and ``mlflow.llm.cost`` are the tokens, model and cost; a chat
model's messages and tool calls become OpenInference's messages; the trace's ``mlflow.trace.session`` and
``mlflow.trace.user`` (metadata) go on its root. Attributes already under OpenInference's names (spans an
OpenInference instrumentation sent to an MLflow server) are kept as they are.

A case is keyed by MLflow's trace id (``tr-<hex>``); span ids, base64 in ``Trace.to_json()``, are read as the hex
MLflow shows. Every span is checked on its own, so an error names the file, line, trace and span.
"""

import base64
import binascii
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, NonNegativeInt, ValidationError

from assay.formats.errors import from_validation_error, json_path, preview
from assay.traces.documents import documents
from assay.traces.otlp import SPAN_KIND_ATTRIBUTE
from assay.traces.spans import Attributes, Span, TraceFileError, flatten, span_error, validated

SESSION_KEY = "mlflow.trace.session"
USER_KEY = "mlflow.trace.user"
_KINDS = {"CHAT_MODEL": "LLM", "UNKNOWN": ""}
"""MLflow span types whose OpenInference kind has another name; the others (LLM, RETRIEVER, TOOL, AGENT, CHAIN,
EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR...) keep theirs."""
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_SPAN_ID_SIZE, _TRACE_ID_SIZE = 8, 16
Id = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^\S+$")]


def _status_code(value: Any) -> Any:
    """``STATUS_CODE_OK`` (MLflow 3) or ``OK`` (MLflow 2) as ``OK``."""
    return value.upper().removeprefix("STATUS_CODE_") if isinstance(value, str) else value


StatusCode = Annotated[Literal["OK", "ERROR", "UNSET"], BeforeValidator(_status_code)]


class _Status(BaseModel):
    model_config = ConfigDict(extra="ignore")

    code: StatusCode = "UNSET"
    message: str | None = ""


class MlflowSpan(BaseModel):
    """A span as MLflow 3 writes it; fields the import does not read are ignored."""

    model_config = ConfigDict(extra="ignore")

    name: str
    span_id: Id
    trace_id: Id | None = None
    parent_span_id: Id | None = None
    start_time_unix_nano: NonNegativeInt
    end_time_unix_nano: NonNegativeInt | None = None
    status: _Status = Field(default_factory=_Status)
    attributes: dict[str, Any] = Field(default_factory=dict)


class _Context(BaseModel):
    model_config = ConfigDict(extra="ignore")

    span_id: Id
    trace_id: Id | None = None


class MlflowSpanV2(BaseModel):
    """A span as MLflow 2 wrote it."""

    model_config = ConfigDict(extra="ignore")

    name: str
    context: _Context
    parent_id: Id | None = None
    start_time: NonNegativeInt
    end_time: NonNegativeInt | None = None
    status_code: StatusCode = "UNSET"
    status_message: str | None = ""
    attributes: dict[str, Any] = Field(default_factory=dict)


class MlflowTraceInfo(BaseModel):
    """What the import reads of a trace's ``info``: its id, metadata and tags (MLflow 3 or 2 names)."""

    model_config = ConfigDict(extra="ignore")

    trace_id: Id | None = None
    request_id: Id | None = None
    trace_metadata: dict[str, Any] = Field(default_factory=dict)
    request_metadata: dict[str, Any] = Field(default_factory=dict)
    tags: dict[str, Any] = Field(default_factory=dict)

    def value(self, key: str) -> Any:
        for source in (self.trace_metadata, self.request_metadata, self.tags):
            if source.get(key) not in (None, ""):
                return source[key]
        return None


def read_mlflow(path: Path) -> Iterator[Span]:
    """Every span of an MLflow trace file, in file order."""
    for line, document in documents(path):
        where = f"line {line}"
        traces = [(json_path(index), trace) for index, trace in enumerate(document)] if isinstance(
            document, list) else [("", document)]  # fmt: skip
        for here, trace in traces:
            yield from _trace(trace, path, f"{where}, {here}" if here else where)


def _trace(trace: Any, path: Path, location: str) -> Iterator[Span]:
    expected = 'expected an MLflow trace {"info": {...}, "data": {"spans": [...]}}'
    if not isinstance(trace, dict) or not ("data" in trace or "spans" in trace):
        raise TraceFileError(path, location, f"{expected}, got {preview(trace)}")
    data, at = (trace["data"], "data") if "data" in trace else (trace, "")
    if not isinstance(data, dict):
        raise TraceFileError(path, _at(location, at), f"{expected}, got {preview(data)}")
    spans = data.get("spans")
    if not isinstance(spans, list):
        raise TraceFileError(path, _at(location, at, "spans"), f"expected a list of spans, got {preview(spans)}")
    raw_info = trace.get("info")
    raw_info = {} if raw_info is None else raw_info
    if not isinstance(raw_info, dict):
        raise TraceFileError(path, _at(location, "info"), f"expected an object, got {preview(raw_info)}")
    try:
        info = MlflowTraceInfo.model_validate(raw_info)
    except ValidationError as error:
        locate = lambda loc: _at(location, "info", *loc)  # noqa: E731
        raise from_validation_error(error, path, model=MlflowTraceInfo, where=locate) from None
    trace_id = info.trace_id or info.request_id
    request = info.value("mlflow.traceInputs") or data.get("request")
    response = info.value("mlflow.traceOutputs") or data.get("response")
    for index, raw in enumerate(spans):
        span = _span(raw, trace_id, path, _at(location, at, "spans", index))
        if span.parent_id is None:
            _root(span, info, request, response)
        yield span


def _at(location: str, *parts: str | int) -> str:
    here = json_path(*parts)
    return f"{location}, {here}" if here else location


def _span(raw: Any, trace_id: str | None, path: Path, location: str) -> Span:
    if not isinstance(raw, dict):
        raise TraceFileError(path, location, f"expected an MLflow span (an object with name, span_id, "
                             f"start_time_unix_nano...), got {preview(raw)}")  # fmt: skip
    context = raw.get("context")
    claimed = (context if isinstance(context, dict) else raw).get("span_id")
    span_id = claimed if isinstance(claimed, str) and claimed else None
    model: type[MlflowSpan | MlflowSpanV2] = MlflowSpanV2 if "context" in raw else MlflowSpan
    parsed = validated(model, raw, path, location, span_id)
    if isinstance(parsed, MlflowSpanV2):
        ids = (parsed.context.trace_id, parsed.context.span_id, parsed.parent_id)
        start, end, status = parsed.start_time, parsed.end_time, (parsed.status_code, parsed.status_message)
    else:
        ids = (parsed.trace_id, parsed.span_id, parsed.parent_span_id)
        start, end = parsed.start_time_unix_nano, parsed.end_time_unix_nano
        status = (parsed.status.code, parsed.status.message)
    end = start if end is None else end
    if end < start:
        raise span_error(path, location, span_id, "the span ends before it starts (end time before start time)")
    attributes = _attributes(parsed.attributes)
    trace_id = trace_id or _trace_id(attributes, ids[0])
    if trace_id is None:
        raise span_error(path, location, span_id, "no trace id: expected info.trace_id or the span's trace_id")
    kind = _kind(attributes)
    _openinference(parsed.name, kind, parsed.attributes, attributes)
    return Span(
        trace_id=trace_id,
        span_id=_hex_id(ids[1], _SPAN_ID_SIZE),
        parent_id=_hex_id(ids[2], _SPAN_ID_SIZE) if ids[2] else None,
        name=parsed.name,
        start_ns=start,
        end_ns=end,
        kind=kind,
        status=status[0],
        status_message=status[1] or "",
        attributes=attributes,
        where=f"{path}: {location}",
    )


def _attributes(raw: dict[str, Any]) -> Attributes:
    """MLflow's own attributes decoded (MLflow JSON-encodes each value); any others as dotted keys."""
    attributes: Attributes = {}
    for key, value in raw.items():
        decoded = _decoded(value)
        if key.startswith("mlflow."):
            attributes[key] = decoded
        else:
            flatten(decoded, key, attributes)
    return attributes


def _decoded(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value  # written by another instrumentation, as it is


def _trace_id(attributes: Attributes, span_trace_id: str | None) -> str | None:
    """The id of a trace whose ``info`` is not in the file: the one MLflow records on each span, else
    ``tr-<hex>`` from the span's OpenTelemetry trace id."""
    recorded = attributes.get("mlflow.traceRequestId")
    if isinstance(recorded, str) and recorded:
        return recorded
    if not span_trace_id:
        return None
    hex_id = _hex_id(span_trace_id, _TRACE_ID_SIZE)
    return span_trace_id if hex_id.startswith("tr-") else f"tr-{hex_id}"


def _hex_id(value: str, size: int) -> str:
    """An id of ``size`` bytes as hex, from base64 (``Trace.to_json()``) or hex with or without ``0x`` (MLflow 2);
    any other id as written."""
    text = value.removeprefix("0x")
    if len(text) == 2 * size and _HEX.match(text):
        return text.lower()
    if len(value) == 4 * ((size + 2) // 3):
        try:
            decoded = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value
        if len(decoded) == size:
            return decoded.hex()
    return value


def _kind(attributes: Attributes) -> str:
    declared = attributes.get("mlflow.spanType")
    kind = declared.upper() if isinstance(declared, str) else ""
    return _KINDS.get(kind, kind) or str(attributes.get(SPAN_KIND_ATTRIBUTE) or "").upper()


def _openinference(name: str, kind: str, raw: dict[str, Any], attributes: Attributes) -> None:
    """Copy what MLflow recorded to the OpenInference names the mapping reads, keeping any already there."""
    put = attributes.setdefault
    if kind:
        put(SPAN_KIND_ATTRIBUTE, kind)
    inputs, outputs = attributes.get("mlflow.spanInputs"), attributes.get("mlflow.spanOutputs")
    _value(attributes, SpanAttributes.INPUT_VALUE, SpanAttributes.INPUT_MIME_TYPE, raw.get("mlflow.spanInputs"))
    _value(attributes, SpanAttributes.OUTPUT_VALUE, SpanAttributes.OUTPUT_MIME_TYPE, raw.get("mlflow.spanOutputs"))
    usage = attributes.get("mlflow.chat.tokenUsage")
    if not isinstance(usage, dict) and kind == OpenInferenceSpanKindValues.LLM.value and isinstance(outputs, dict):
        usage = outputs.get("usage")  # a chat completion's own (OpenAI's or Anthropic's names)
    if isinstance(usage, dict):
        for target, names in ((SpanAttributes.LLM_TOKEN_COUNT_PROMPT, ("input_tokens", "prompt_tokens")),
                              (SpanAttributes.LLM_TOKEN_COUNT_COMPLETION, ("output_tokens", "completion_tokens")),
                              (SpanAttributes.LLM_TOKEN_COUNT_TOTAL, ("total_tokens",))):  # fmt: skip
            count = next((usage[name] for name in names if _is_number(usage.get(name))), None)
            if count is not None:
                put(target, count)
    cost = attributes.get("mlflow.llm.cost")
    if isinstance(cost, dict):
        for target, name in ((SpanAttributes.LLM_COST_TOTAL, "total_cost"), (SpanAttributes.LLM_COST_PROMPT,
                             "input_cost"), (SpanAttributes.LLM_COST_COMPLETION, "output_cost")):  # fmt: skip
            if _is_number(cost.get(name)):
                put(target, cost[name])
    model = attributes.get("mlflow.llm.model")
    for source in (inputs, outputs):
        if not model and isinstance(source, dict) and isinstance(source.get("model"), str):
            model = source["model"]
    if model and kind == OpenInferenceSpanKindValues.LLM.value:
        put(SpanAttributes.LLM_MODEL_NAME, str(model))
    if attributes.get("mlflow.llm.provider"):
        put(SpanAttributes.LLM_PROVIDER, str(attributes["mlflow.llm.provider"]))
    if kind == OpenInferenceSpanKindValues.LLM.value:
        _messages(attributes, inputs, outputs)
    elif kind == OpenInferenceSpanKindValues.RETRIEVER.value:
        _retrieved(attributes, outputs)
    elif kind == OpenInferenceSpanKindValues.TOOL.value:
        put(SpanAttributes.TOOL_NAME, name)


def _value(attributes: Attributes, key: str, mime_key: str, raw: Any) -> None:
    """A span's inputs or outputs as OpenInference's text: a string as it is, anything else as its JSON."""
    if raw is None or key in attributes:
        return
    decoded = _decoded(raw)
    if isinstance(decoded, str):
        attributes[key] = decoded
        attributes.setdefault(mime_key, "text/plain")
    else:
        attributes[key] = raw if isinstance(raw, str) else orjson.dumps(raw).decode("utf-8")
        attributes.setdefault(mime_key, "application/json")


def _messages(attributes: Attributes, inputs: Any, outputs: Any) -> None:
    """A chat model's request messages and its reply (with the tools it called), in OpenInference's names."""
    messages = inputs.get("messages") if isinstance(inputs, dict) else inputs
    choices = outputs.get("choices") if isinstance(outputs, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    replies = [first.get("message")]
    for prefix, items in ((SpanAttributes.LLM_INPUT_MESSAGES, messages), (SpanAttributes.LLM_OUTPUT_MESSAGES, replies)):
        if not isinstance(items, list) or any(key.startswith(f"{prefix}.") for key in attributes):
            continue
        for index, message in enumerate(item for item in items if isinstance(item, dict)):
            at = f"{prefix}.{index}."
            if isinstance(message.get("role"), str):
                attributes[at + MessageAttributes.MESSAGE_ROLE] = message["role"]
            if isinstance(message.get("content"), str):
                attributes[at + MessageAttributes.MESSAGE_CONTENT] = message["content"]
            calls = message.get("tool_calls")
            for number, call in enumerate(calls if isinstance(calls, list) else []):
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    call_at = f"{at}{MessageAttributes.MESSAGE_TOOL_CALLS}.{number}."
                    attributes[call_at + ToolCallAttributes.TOOL_CALL_FUNCTION_NAME] = function["name"]
                    arguments = function.get("arguments")
                    if arguments is not None:
                        attributes[call_at + ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON] = (
                            arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode("utf-8")
                        )


def _retrieved(attributes: Attributes, outputs: Any) -> None:
    """A retriever's outputs (MLflow ``Document``s: ``page_content``, ``metadata``, ``id``; or plain texts) as
    OpenInference's retrieved documents."""
    prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}."
    if not isinstance(outputs, list) or any(key.startswith(prefix) for key in attributes):
        return
    for index, document in enumerate(outputs):
        at = f"{prefix}{index}."
        if isinstance(document, str):
            attributes[at + DocumentAttributes.DOCUMENT_CONTENT] = document
            continue
        if not isinstance(document, dict):
            continue
        metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
        content = document.get("page_content", document.get("content"))
        if isinstance(content, str):
            attributes[at + DocumentAttributes.DOCUMENT_CONTENT] = content
        name = metadata.get("doc_uri") or document.get("id") or metadata.get("chunk_id")
        if name:
            attributes[at + DocumentAttributes.DOCUMENT_ID] = str(name)
        score = next((value for value in (document.get("score"), metadata.get("score"),
                                          metadata.get("relevance_score")) if _is_number(value)), None)  # fmt: skip
        if score is not None:
            attributes[at + DocumentAttributes.DOCUMENT_SCORE] = score
        if metadata:
            attributes[at + DocumentAttributes.DOCUMENT_METADATA] = orjson.dumps(metadata, default=str).decode()


def _root(span: Span, info: MlflowTraceInfo, request: Any, response: Any) -> None:
    """The trace's session and user, and its request and response where the root span records none."""
    for key, target in ((SESSION_KEY, SpanAttributes.SESSION_ID), (USER_KEY, SpanAttributes.USER_ID)):
        value = info.value(key)
        if value is not None:
            span.attributes.setdefault(target, str(value))
    _value(span.attributes, SpanAttributes.INPUT_VALUE, SpanAttributes.INPUT_MIME_TYPE, request or None)
    _value(span.attributes, SpanAttributes.OUTPUT_VALUE, SpanAttributes.OUTPUT_MIME_TYPE, response or None)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
