"""From the spans of one trace to what a test-lab row needs, by the OpenInference semantic conventions; spans
written by the OpenTelemetry GenAI conventions are read into them first (`assay.traces.genai`), and the
conventions each request was read with are kept for the report.

The root span is the request: its ``input.value`` is the question and its ``output.value`` the answer (a JSON
value is unwrapped: a chat request's last user message, an ``{"answer": ...}`` object, a chat completion's
first choice). When the root records neither, its own messages, else the first LLM span's last user message and
the last LLM span's reply stand in. A last reply that asks for tools instead of answering leaves the answer
absent, with that reason (`assay.traces.tool_calls`). RETRIEVER spans give the retrieved documents (ids,
contents, scores, in retrieval order); LLM spans the tokens (summed over calls, cache reads and reasoning
apart), cost and model; TOOL spans the tool calls. ``session.id`` groups traces into a conversation and, with
``user.id``, is kept on the case. The route is the root's name unless that is a framework class
(``RunnableSequence``...), or an attribute of the root (``--route-from``). Every other span is counted as not
mapped, by kind and name.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from openinference.semconv.trace import DocumentAttributes, OpenInferenceSpanKindValues, SpanAttributes

from assay.models import RetrievedChunk, ToolCall
from assay.models.traces import ROUTE_FROM_SPAN_NAME
from assay.traces import genai
from assay.traces.genai import read_genai
from assay.traces.replies import answer_in, last_user_message, question_in, reply_of
from assay.traces.spans import Span
from assay.traces.tool_calls import TOOL, absent_because, indexed, mark_final, tool_calls

LLM, RETRIEVER = OpenInferenceSpanKindValues.LLM.value, OpenInferenceSpanKindValues.RETRIEVER.value
ROUTE_ATTRIBUTE = "attribute:"
FRAMEWORK_CLASS = re.compile(r"^(Runnable[A-Za-z]*|AgentExecutor|LangGraph|[A-Za-z]*Chain)(<.*>)?$")
"""Root span names that say which framework class ran, not what the request was (LangChain's)."""
_DOCUMENT_ID_METADATA = ("id", "source", "uri")
"""Where a document without ``document.id`` keeps its id in ``document.metadata`` (LangChain: ``source``)."""
_DOCUMENT = re.compile(rf"^{re.escape(SpanAttributes.RETRIEVAL_DOCUMENTS)}\.(\d+)\.(.+)$")


@dataclass
class MappedTrace:
    """One trace read as a request to the system: what becomes one test case and its answer."""

    trace_id: str
    started_at: datetime
    route: str
    service: str
    question: str | None
    answer: str | None
    answer_absent: str | None = None
    """Why the request has no answer although it did not fail (its last model reply was a tool call)."""
    documents: list[RetrievedChunk] = field(default_factory=list)
    latency_s: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    model_name: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    session_id: str | None = None
    user_id: str | None = None
    conventions: tuple[str, ...] = ()
    """The trace conventions its spans were read with (``openinference``, ``otel-genai``...), sorted."""
    error: str | None = None
    unmapped: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(kind, name) of every span no field came from."""


READ_PREFIXES = (
    SpanAttributes.OPENINFERENCE_SPAN_KIND, SpanAttributes.SESSION_ID, SpanAttributes.USER_ID,
    SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE, "llm.", f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.", "tool.",
    "tool_call.", *genai.READ_PREFIXES,
)  # fmt: skip
"""Every attribute name the mapping may read, on any span (`mapped_attributes` narrows it by the span's kind):
a reader may skip other attributes before parsing them."""


def mapped_attributes(span: Span, route_from: str = ROUTE_FROM_SPAN_NAME) -> dict[str, Any]:
    """The attributes of ``span`` that `map_trace` can read, by its place and kind: the request and answer
    (``input.value``, ``output.value``), usage and the route's attribute only on a root; documents on a
    RETRIEVER; usage and messages on an LLM; the call on a TOOL; the session, the user and the GenAI attributes
    (read into these once the span's events are joined) anywhere. An import keeps only these, so that a large
    export's spans, held until every trace is complete, do not also hold request bodies, embeddings and
    metadata nothing reads. Keep it in step with the readings below."""
    prefixes = [SpanAttributes.SESSION_ID, SpanAttributes.USER_ID, *genai.READ_PREFIXES]
    if not span.parent_id:
        prefixes += [SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE, "llm."]
        if route_from.startswith(ROUTE_ATTRIBUTE):
            prefixes.append(route_from.removeprefix(ROUTE_ATTRIBUTE))
    if span.kind == LLM:
        prefixes.append("llm.")
    elif span.kind == RETRIEVER:
        prefixes.append(f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.")
    elif span.kind == TOOL:
        prefixes += ["tool.", "tool_call.", SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE]
    kept = tuple(prefixes)
    return {key: value for key, value in span.attributes.items() if key.startswith(kept)}


def map_trace(root: Span, spans: list[Span], route_from: str = ROUTE_FROM_SPAN_NAME) -> MappedTrace:
    """``spans``: every span of the trace, the root included, in any order (their attributes are completed
    with what their GenAI attributes and events say)."""
    conventions = tuple(sorted({convention for span in spans if (convention := read_genai(span))}))
    ordered = sorted(spans, key=lambda span: span.start_ns)
    llm_spans = [span for span in ordered if span.kind == LLM]
    used = {root.span_id}
    question = question_in(root.attributes.get(SpanAttributes.INPUT_VALUE))
    if question is None:
        question = last_user_message(root.attributes)
    if question is None and llm_spans:
        question = last_user_message(llm_spans[0].attributes)
        used.add(llm_spans[0].span_id)
    reply, replied_in = answer_in(root.attributes.get(SpanAttributes.OUTPUT_VALUE)), root
    if reply is None and llm_spans:
        reply, replied_in = reply_of(llm_spans[-1]), llm_spans[-1]
        used.add(llm_spans[-1].span_id)
    answer, final = reply if reply is not None else (None, [])
    mapped = MappedTrace(
        trace_id=root.trace_id,
        started_at=datetime.fromtimestamp(root.start_ns / 1e9, tz=UTC),
        route=_route(root, ordered, route_from),
        service=root.service,
        question=question,
        answer=answer,
        answer_absent=absent_because(final) if answer is None and final else None,
        latency_s=root.duration_s,
        session_id=_first(root, ordered, SpanAttributes.SESSION_ID),
        user_id=_first(root, ordered, SpanAttributes.USER_ID),
        conventions=conventions,
        error=_error(root),
    )
    used |= _documents(ordered, mapped)
    used |= _usage(root, llm_spans, mapped)
    mapped.tool_calls, tool_spans = tool_calls(root, ordered, llm_spans)
    used |= tool_spans
    if mapped.answer_absent:
        mapped.tool_calls = mark_final(mapped.tool_calls, final, replied_in)
    mapped.unmapped = Counter((span.kind or "unknown", span.name) for span in ordered if span.span_id not in used)
    return mapped


def check_route_from(route_from: str) -> None:
    """``--route-from`` is ``span-name`` or ``attribute:NAME``."""
    name = route_from.removeprefix(ROUTE_ATTRIBUTE).strip()
    if route_from != ROUTE_FROM_SPAN_NAME and not (route_from.startswith(ROUTE_ATTRIBUTE) and name):
        raise ValueError(f"--route-from {route_from!r}: expected {ROUTE_FROM_SPAN_NAME} or {ROUTE_ATTRIBUTE}NAME "
                         "(an attribute of the root span, e.g. attribute:http.route)")  # fmt: skip


def _route(root: Span, spans: list[Span], route_from: str) -> str:
    """The root's ``attribute:NAME`` when asked for and present; else its name, unless that names a framework
    class: then the first span below it (in start order, nearest first) whose name does not."""
    if route_from.startswith(ROUTE_ATTRIBUTE):
        value = root.attributes.get(route_from.removeprefix(ROUTE_ATTRIBUTE))
        if value not in (None, ""):
            return str(value)
    if not FRAMEWORK_CLASS.match(root.name):
        return root.name
    level = [root.span_id]
    while level:
        below = [span for span in spans if span.parent_id in level]
        named = next((span.name for span in below if span.name and not FRAMEWORK_CLASS.match(span.name)), None)
        if named:
            return named
        level = [span.span_id for span in below]
    return root.name


def _error(root: Span) -> str | None:
    if root.status != "ERROR":
        return None
    return f"the request failed: {root.status_message}" if root.status_message else "the request failed (no message)"


def _first(root: Span, spans: list[Span], name: str) -> str | None:
    """The attribute ``name`` of the root, else of the first span that has it."""
    for span in (root, *spans):
        value = span.attributes.get(name)
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
        for fields in indexed(span.attributes, _DOCUMENT):
            content = fields.get(DocumentAttributes.DOCUMENT_CONTENT)
            if not isinstance(content, str):
                continue
            uri = _document_id(fields)
            if (uri, content) in seen:
                continue
            seen.add((uri, content))
            score = fields.get(DocumentAttributes.DOCUMENT_SCORE)
            mapped.documents.append(RetrievedChunk(
                text=content, doc_uri=uri, rank=len(mapped.documents),
                score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
            ))  # fmt: skip
    return used


def _document_id(fields: dict[str, Any]) -> str:
    """``document.id``, else the id, source or uri its metadata names (a JSON object, or dotted keys), else
    ``document.url``; empty when none says."""
    metadata = fields.get(DocumentAttributes.DOCUMENT_METADATA)
    if isinstance(metadata, str):
        try:
            metadata = orjson.loads(metadata)
        except orjson.JSONDecodeError:
            metadata = None
    metadata = metadata if isinstance(metadata, dict) else {}
    candidates = [fields.get(DocumentAttributes.DOCUMENT_ID)]
    for name in _DOCUMENT_ID_METADATA:
        candidates += [metadata.get(name), fields.get(f"{DocumentAttributes.DOCUMENT_METADATA}.{name}")]
    candidates.append(fields.get(DocumentAttributes.DOCUMENT_URL))
    return next((str(value) for value in candidates if value not in (None, "") and not isinstance(value, dict)), "")


def _usage(root: Span, llm_spans: list[Span], mapped: MappedTrace) -> set[str]:
    """Tokens and cost summed over the LLM calls (the root's own figures only when no call records any, so an
    aggregate on the root is never added to its parts); the model is the last call's."""
    sources = [span for span in llm_spans if _has_usage(span)] or ([root] if _has_usage(root) else [])
    mapped.input_tokens = _total(sources, SpanAttributes.LLM_TOKEN_COUNT_PROMPT)
    mapped.output_tokens = _total(sources, SpanAttributes.LLM_TOKEN_COUNT_COMPLETION)
    mapped.cached_input_tokens = _total(sources, SpanAttributes.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ)
    mapped.reasoning_tokens = _total(sources, SpanAttributes.LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING)
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
