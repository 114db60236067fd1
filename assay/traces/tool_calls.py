"""The tool calls of a trace, by the OpenInference conventions (GenAI spans are read into them first): TOOL spans
in the order they started, or, when a trace has none, the calls its LLM spans asked for. A call made inside a
sub-agent (an AGENT span below the request's root) names that agent, so that its calls stay with it.

A model reply that asks for tools instead of answering is the request's outcome when it is the last reply: its
calls are marked ``final_reply`` (added when no TOOL span ran them), and the answer is absent, never the reply's
raw JSON.
"""

import re
from typing import Any

import orjson
from openinference.semconv.trace import (
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)

from assay.models import ToolCall
from assay.traces.spans import Span

TOOL, AGENT = OpenInferenceSpanKindValues.TOOL.value, OpenInferenceSpanKindValues.AGENT.value
RequestedCall = tuple[str, Any]
"""``(name, arguments)`` of a call a model asked for; arguments as written (an object or a JSON text)."""
_OUTPUT_MESSAGE = re.compile(rf"^{re.escape(SpanAttributes.LLM_OUTPUT_MESSAGES)}\.(\d+)\.(.+)$")
_TOOL_CALL = re.compile(rf"^{re.escape(MessageAttributes.MESSAGE_TOOL_CALLS)}\.(\d+)\.(.+)$")


def tool_calls(root: Span, spans: list[Span], llm_spans: list[Span]) -> tuple[list[ToolCall], set[str]]:
    """The calls of a trace (``spans`` in start order) and the ids of the spans they were read from."""
    by_id = {span.span_id: span for span in spans}
    tools = [span for span in spans if span.kind == TOOL]
    calls = []
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
        agent = _agent(span, root, by_id)
        calls.append(_tool_call(str(name), arguments, output=output, error=error, span=span, agent=agent))
    if tools:
        return calls, {span.span_id for span in tools}
    for span in llm_spans:
        agent = _agent(span, root, by_id)
        calls += [_tool_call(name, arguments, span=span, agent=agent) for name, arguments in requested(span)]
    return calls, set()


def requested(span: Span) -> list[RequestedCall]:
    """The calls an LLM span's output messages asked for."""
    found = []
    for message in indexed(span.attributes, _OUTPUT_MESSAGE):
        for call in indexed(message, _TOOL_CALL):
            name = call.get(ToolCallAttributes.TOOL_CALL_FUNCTION_NAME)
            if name:
                found.append((str(name), call.get(ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON)))
    return found


def mark_final(calls: list[ToolCall], final: list[RequestedCall], span: Span) -> list[ToolCall]:
    """``calls`` with the last reply's ``final`` calls marked: the latest listed call of the same name and
    arguments that did not run (no output, no error), else the call added, read from ``span``."""
    marked = list(calls)
    for name, arguments in final:
        call = _tool_call(name, arguments, span=span)
        same = [index for index, known in enumerate(marked) if not known.final_reply and known.output is None
                and known.error is None and (known.name, known.arguments, known.arguments_text)
                == (call.name, call.arguments, call.arguments_text)]  # fmt: skip
        if same:
            marked[same[-1]] = marked[same[-1]].model_copy(update={"final_reply": True})
        else:
            marked.append(call.model_copy(update={"final_reply": True}))
    return marked


def absent_because(final: list[RequestedCall]) -> str:
    names = ", ".join(dict.fromkeys(name for name, _ in final))
    return f"the last model reply was a tool call ({names}), not an answer"


def _agent(span: Span, root: Span, by_id: dict[str, Span]) -> str | None:
    """The name of the nearest AGENT span above ``span`` that is not the request's root."""
    parent = by_id.get(span.parent_id or "")
    seen = {span.span_id}
    while parent is not None and parent.span_id != root.span_id and parent.span_id not in seen:
        if parent.kind == AGENT:
            return parent.name
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_id or "")
    return None


def _tool_call(name: str, arguments: Any, *, span: Span, output: Any = None, error: str | None = None,
               agent: str | None = None) -> ToolCall:  # fmt: skip
    parsed, text = _arguments(arguments)
    return ToolCall(
        name=name,
        arguments=parsed,
        arguments_text=text,
        output=None if output is None else text_value(output),
        error=error,
        duration=span.duration_s,
        span_id=span.span_id,
        agent=agent,
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
    return {}, text_value(value)


def indexed(attributes: dict[str, Any], pattern: re.Pattern[str]) -> list[dict[str, Any]]:
    """``{"x.0.a": 1, "x.1.a": 2}`` -> ``[{"a": 1}, {"a": 2}]`` by index."""
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = pattern.match(key)
        if match:
            groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [groups[index] for index in sorted(groups)]


def text_value(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode("utf-8")
