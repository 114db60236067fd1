"""From the spans of one trace to what a test-lab row needs, by the OpenInference semantic conventions.

The root span is the request: its ``input.value`` is the question and its ``output.value`` the answer (a JSON
value is unwrapped: a chat request's last user message, an ``{"answer": ...}`` object, a chat completion's
first choice). When the root records neither, the first LLM span's last user message and the last LLM span's
reply stand in. RETRIEVER spans give the retrieved documents (ids, contents, scores, in retrieval order); LLM
spans the tokens (summed over calls), cost and model; TOOL spans the tool calls in the order they started
(or, when a trace has no TOOL span, the calls its LLM spans asked for). ``session.id`` groups traces into a
conversation. Every other span is counted as not mapped, by kind and name.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)

from assay.models import RetrievedChunk, ToolCall
from assay.traces.spans import Span

LLM, RETRIEVER, TOOL = (OpenInferenceSpanKindValues.LLM.value, OpenInferenceSpanKindValues.RETRIEVER.value,
                        OpenInferenceSpanKindValues.TOOL.value)  # fmt: skip
_QUESTION_KEYS = ("question", "query", "input", "prompt", "user_input", "message", "text")
_ANSWER_KEYS = ("answer", "output", "response", "content", "text", "result")
_DOCUMENT = re.compile(rf"^{re.escape(SpanAttributes.RETRIEVAL_DOCUMENTS)}\.(\d+)\.(.+)$")
_MESSAGE = re.compile(r"^(\d+)\.(.+)$")


@dataclass
class MappedTrace:
    """One trace read as a request to the system: what becomes one test case and its answer."""

    trace_id: str
    started_at: datetime
    route: str
    service: str
    question: str | None
    answer: str | None
    documents: list[RetrievedChunk] = field(default_factory=list)
    latency_s: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    model_name: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    session_id: str | None = None
    error: str | None = None
    unmapped: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(kind, name) of every span no field came from."""


READ_PREFIXES = (
    SpanAttributes.OPENINFERENCE_SPAN_KIND, SpanAttributes.SESSION_ID, SpanAttributes.INPUT_VALUE,
    SpanAttributes.OUTPUT_VALUE, "llm.", f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.", "tool.", "tool_call.",
)  # fmt: skip
"""Every attribute name the mapping may read, on any span (`mapped_attributes` narrows it by the span's kind):
a reader may skip other attributes before parsing them."""


def mapped_attributes(span: Span) -> dict[str, Any]:
    """The attributes of ``span`` that `map_trace` can read, by its place and kind: the request and answer
    (``input.value``, ``output.value``) and usage only on a root; documents on a RETRIEVER; usage and messages
    on an LLM; the call on a TOOL; the session anywhere. An import keeps only these, so that a large export's
    spans, held until every trace is complete, do not also hold request bodies, embeddings and metadata
    nothing reads. Keep it in step with the readings below."""
    prefixes = [SpanAttributes.SESSION_ID]
    if not span.parent_id:
        prefixes += [SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE, "llm."]
    if span.kind == LLM:
        prefixes.append("llm.")
    elif span.kind == RETRIEVER:
        prefixes.append(f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.")
    elif span.kind == TOOL:
        prefixes += ["tool.", "tool_call.", SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE]
    kept = tuple(prefixes)
    return {key: value for key, value in span.attributes.items() if key.startswith(kept)}


def map_trace(root: Span, spans: list[Span]) -> MappedTrace:
    """``spans``: every span of the trace, the root included, in any order."""
    ordered = sorted(spans, key=lambda span: span.start_ns)
    llm_spans = [span for span in ordered if span.kind == LLM]
    used = {root.span_id}
    question = _question(root.attributes.get(SpanAttributes.INPUT_VALUE))
    if question is None and llm_spans:
        question = _last_user_message(llm_spans[0].attributes)
        used.add(llm_spans[0].span_id)
    answer = _answer(root.attributes.get(SpanAttributes.OUTPUT_VALUE))
    if answer is None and llm_spans:
        answer = _reply(llm_spans[-1].attributes)
        used.add(llm_spans[-1].span_id)
    mapped = MappedTrace(
        trace_id=root.trace_id,
        started_at=datetime.fromtimestamp(root.start_ns / 1e9, tz=UTC),
        route=root.name,
        service=root.service,
        question=question,
        answer=answer,
        latency_s=root.duration_s,
        session_id=_session(root, ordered),
        error=_error(root),
    )
    used |= _documents(ordered, mapped)
    used |= _usage(root, llm_spans, mapped)
    used |= _tool_calls(ordered, llm_spans, mapped)
    mapped.unmapped = Counter((span.kind or "unknown", span.name) for span in ordered if span.span_id not in used)
    return mapped


def _error(root: Span) -> str | None:
    if root.status != "ERROR":
        return None
    return f"the request failed: {root.status_message}" if root.status_message else "the request failed (no message)"


def _session(root: Span, spans: list[Span]) -> str | None:
    for span in (root, *spans):
        value = span.attributes.get(SpanAttributes.SESSION_ID)
        if value not in (None, ""):
            return str(value)
    return None


def _documents(spans: list[Span], mapped: MappedTrace) -> set[str]:
    used: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for span in spans:
        if span.kind != RETRIEVER:
            continue
        used.add(span.span_id)
        for fields in _indexed(span.attributes, _DOCUMENT):
            content = fields.get(DocumentAttributes.DOCUMENT_CONTENT)
            if not isinstance(content, str):
                continue
            uri = str(fields.get(DocumentAttributes.DOCUMENT_ID) or fields.get(DocumentAttributes.DOCUMENT_URL) or "")
            if (uri, content) in seen:
                continue
            seen.add((uri, content))
            score = fields.get(DocumentAttributes.DOCUMENT_SCORE)
            mapped.documents.append(RetrievedChunk(
                text=content, doc_uri=uri, rank=len(mapped.documents),
                score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
            ))  # fmt: skip
    return used


def _usage(root: Span, llm_spans: list[Span], mapped: MappedTrace) -> set[str]:
    """Tokens and cost summed over the LLM calls (the root's own figures only when no call records any, so an
    aggregate on the root is never added to its parts); the model is the last call's."""
    sources = [span for span in llm_spans if _has_usage(span)] or ([root] if _has_usage(root) else [])
    mapped.input_tokens = _total(sources, SpanAttributes.LLM_TOKEN_COUNT_PROMPT)
    mapped.output_tokens = _total(sources, SpanAttributes.LLM_TOKEN_COUNT_COMPLETION)
    cost = _total(sources, SpanAttributes.LLM_COST_TOTAL, integer=False)
    mapped.cost = float(cost) if cost is not None else None
    called = [name for span in llm_spans if (name := span.attributes.get(SpanAttributes.LLM_MODEL_NAME))]
    own = root.attributes.get(SpanAttributes.LLM_MODEL_NAME)
    mapped.model_name = str(called[-1]) if called else (str(own) if own else None)
    return {span.span_id for span in llm_spans}


def _has_usage(span: Span) -> bool:
    names = (SpanAttributes.LLM_TOKEN_COUNT_PROMPT, SpanAttributes.LLM_TOKEN_COUNT_COMPLETION,
             SpanAttributes.LLM_COST_TOTAL)  # fmt: skip
    return any(name in span.attributes for name in names)


def _total(spans: list[Span], name: str, *, integer: bool = True) -> int | float | None:
    values = [span.attributes.get(name) for span in spans]
    numbers = [value for value in values if isinstance(value, int | float) and not isinstance(value, bool)]
    if not numbers:
        return None
    total = sum(numbers)
    return int(total) if integer else total


def _tool_calls(spans: list[Span], llm_spans: list[Span], mapped: MappedTrace) -> set[str]:
    tools = [span for span in spans if span.kind == TOOL]
    for span in tools:
        attributes = span.attributes
        name = (attributes.get(SpanAttributes.TOOL_NAME) or attributes.get(ToolCallAttributes.TOOL_CALL_FUNCTION_NAME)
                or span.name)  # fmt: skip
        arguments = attributes.get(ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON)
        if arguments is None:
            arguments = attributes.get(SpanAttributes.INPUT_VALUE)
        output = attributes.get(SpanAttributes.OUTPUT_VALUE)
        error = None
        if span.status == "ERROR":
            error = span.status_message or "the tool call failed (no message)"
        mapped.tool_calls.append(_tool_call(str(name), arguments, output=output, error=error, span=span))
    if tools:
        return {span.span_id for span in tools}
    prefix = f"{SpanAttributes.LLM_OUTPUT_MESSAGES}."
    for span in llm_spans:
        for message in _indexed(span.attributes, re.compile(rf"^{re.escape(prefix)}(\d+)\.(.+)$")):
            calls = _indexed(message, re.compile(rf"^{re.escape(MessageAttributes.MESSAGE_TOOL_CALLS)}\.(\d+)\.(.+)$"))
            for call in calls:
                name = call.get(ToolCallAttributes.TOOL_CALL_FUNCTION_NAME)
                if name:
                    arguments = call.get(ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON)
                    mapped.tool_calls.append(_tool_call(str(name), arguments, span=span))
    return set()


def _tool_call(name: str, arguments: Any, *, span: Span, output: Any = None, error: str | None = None) -> ToolCall:
    parsed, text = _arguments(arguments)
    return ToolCall(
        name=name,
        arguments=parsed,
        arguments_text=text,
        output=None if output is None else _text(output),
        error=error,
        duration=span.duration_s,
        span_id=span.span_id,
    )


def _arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    """A JSON object's fields; anything else is kept as text (``arguments_text``), never guessed at."""
    if value is None or value == "":
        return {}, None
    if isinstance(value, dict):
        return value, None
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}, value
        if isinstance(parsed, dict):
            return parsed, None
    return {}, _text(value)


def _indexed(attributes: dict[str, Any], pattern: re.Pattern[str]) -> list[dict[str, Any]]:
    """``{"x.0.a": 1, "x.1.a": 2}`` -> ``[{"a": 1}, {"a": 2}]`` by index; a list value (``{"x": [...]}``,
    unflattened) is read too."""
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = pattern.match(key)
        if match:
            groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [groups[index] for index in sorted(groups)]


def _messages(attributes: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    prefix = f"{kind}."
    found = {key[len(prefix):]: value for key, value in attributes.items() if key.startswith(prefix)}
    return _indexed(found, _MESSAGE)


def _last_user_message(attributes: dict[str, Any]) -> str | None:
    for message in reversed(_messages(attributes, SpanAttributes.LLM_INPUT_MESSAGES)):
        content = message.get(MessageAttributes.MESSAGE_CONTENT)
        if message.get(MessageAttributes.MESSAGE_ROLE) == "user" and isinstance(content, str):
            return content
    return None


def _reply(attributes: dict[str, Any]) -> str | None:
    for message in _messages(attributes, SpanAttributes.LLM_OUTPUT_MESSAGES):
        content = message.get(MessageAttributes.MESSAGE_CONTENT)
        if isinstance(content, str):
            return content
    return None


def _question(value: Any) -> str | None:
    return _unwrap(value, _QUESTION_KEYS, role="user")


def _answer(value: Any) -> str | None:
    return _unwrap(value, _ANSWER_KEYS, role="assistant")


def _unwrap(value: Any, keys: tuple[str, ...], role: str) -> str | None:
    """The text in an ``input.value``/``output.value``: itself, or the one text a JSON value carries."""
    if value is None:
        return None
    if not isinstance(value, str):
        return _text(value)
    stripped = value.strip()
    if not stripped.startswith(("{", "[")):
        return value
    try:
        parsed = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return value
    found = _text_in(parsed, keys, role)
    return found if found is not None else value


def _text_in(parsed: Any, keys: tuple[str, ...], role: str) -> str | None:
    if isinstance(parsed, dict):
        choices = parsed.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message") or {}
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                return message["content"]
        messages = parsed.get("messages")
        if isinstance(messages, list):
            return _text_in(messages, keys, role)
        for key in keys:
            if isinstance(parsed.get(key), str):
                return parsed[key]
        strings = [item for item in parsed.values() if isinstance(item, str)]
        return strings[0] if len(strings) == 1 else None
    if isinstance(parsed, list):
        for message in reversed(parsed):
            if isinstance(message, dict) and message.get("role") == role and isinstance(message.get("content"), str):
                return message["content"]
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode("utf-8")
