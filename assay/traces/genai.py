"""Spans written by the OpenTelemetry GenAI semantic conventions, read as the OpenInference attributes the mapping
to test cases reads, and which convention each span was read with.

Instrumentations write the conventions in several generations, each detected per span: the current attributes
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.usage.*``: OpenLLMetry today, the OTel
instrumentations' newer releases), messages as events (``gen_ai.user.message``, ``gen_ai.choice``: log records
or span events, the OTel ``openai-v2`` instrumentation and OpenLLMetry with ``use_attributes=False``), and the
older indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes. A span's kind comes from
``gen_ai.operation.name`` (``chat`` is an LLM call, ``execute_tool`` a tool, ``retrieval`` a retriever...).
Attribute names are the ones the ``opentelemetry-semantic-conventions`` package publishes; what a span already
says in OpenInference attributes is never overwritten.
"""

from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as genai

from assay.traces.genai_messages import Message, from_events, from_indexed, from_parts, parsed, text_of
from assay.traces.spans import Attributes, Span

OPENINFERENCE = "openinference"
GENAI = "otel-genai"
GENAI_EVENTS = "otel-genai-events"
GENAI_INDEXED = "otel-genai-indexed"
"""The conventions a span can be read with, as the import report names them (``otel-genai-indexed``: the older
``gen_ai.prompt.N.*`` attributes)."""

_OPERATION = genai.GenAiOperationNameValues
_KINDS = {
    _OPERATION.CHAT.value: OpenInferenceSpanKindValues.LLM.value,
    _OPERATION.TEXT_COMPLETION.value: OpenInferenceSpanKindValues.LLM.value,
    _OPERATION.GENERATE_CONTENT.value: OpenInferenceSpanKindValues.LLM.value,
    _OPERATION.EMBEDDINGS.value: OpenInferenceSpanKindValues.EMBEDDING.value,
    _OPERATION.RETRIEVAL.value: OpenInferenceSpanKindValues.RETRIEVER.value,
    _OPERATION.EXECUTE_TOOL.value: OpenInferenceSpanKindValues.TOOL.value,
    _OPERATION.INVOKE_AGENT.value: OpenInferenceSpanKindValues.AGENT.value,
    _OPERATION.CREATE_AGENT.value: OpenInferenceSpanKindValues.AGENT.value,
    _OPERATION.INVOKE_WORKFLOW.value: OpenInferenceSpanKindValues.CHAIN.value,
}
PROMPT, COMPLETION = f"{genai.GEN_AI_PROMPT}.", f"{genai.GEN_AI_COMPLETION}."
_OPENLLMETRY_REASONING = "gen_ai.usage.reasoning_tokens"
"""OpenLLMetry's name for reasoning tokens (its own, beside the conventions' ``gen_ai.usage.reasoning.*``)."""
_USAGE = (
    (SpanAttributes.LLM_TOKEN_COUNT_PROMPT, (genai.GEN_AI_USAGE_INPUT_TOKENS, genai.GEN_AI_USAGE_PROMPT_TOKENS)),
    (SpanAttributes.LLM_TOKEN_COUNT_COMPLETION,
     (genai.GEN_AI_USAGE_OUTPUT_TOKENS, genai.GEN_AI_USAGE_COMPLETION_TOKENS)),
    (SpanAttributes.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ, (genai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,)),
    (SpanAttributes.LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING,
     (genai.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, _OPENLLMETRY_REASONING)),
    (SpanAttributes.LLM_MODEL_NAME, (genai.GEN_AI_RESPONSE_MODEL, genai.GEN_AI_REQUEST_MODEL)),
    (SpanAttributes.SESSION_ID, (genai.GEN_AI_CONVERSATION_ID,)),
    (SpanAttributes.TOOL_NAME, (genai.GEN_AI_TOOL_NAME,)),
    (ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON, (genai.GEN_AI_TOOL_CALL_ARGUMENTS,)),
    (SpanAttributes.OUTPUT_VALUE, (genai.GEN_AI_TOOL_CALL_RESULT,)),
)  # fmt: skip
"""OpenInference attribute <- the GenAI attributes that say the same, in order of preference."""
_OPENINFERENCE_OWN = (
    SpanAttributes.OPENINFERENCE_SPAN_KIND, SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE,
    f"{SpanAttributes.LLM_INPUT_MESSAGES}.", f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.", "llm.token_count.",
    SpanAttributes.LLM_MODEL_NAME, f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.", SpanAttributes.TOOL_NAME,
)  # fmt: skip
"""Attributes only OpenInference writes (``llm.`` alone is not one: OpenLLMetry writes ``llm.request.type``)."""
_OLD_PROMPT_EVENT, _OLD_COMPLETION_EVENT = "gen_ai.content.prompt", "gen_ai.content.completion"
"""The first event form (semantic conventions 1.26-1.27): span events whose ``gen_ai.prompt`` /
``gen_ai.completion`` attribute holds the messages."""
USER_IDS = ("user.id", "enduser.id")
"""OpenTelemetry's user id (``enduser.id`` before ``user.id``; OpenInference writes ``user.id`` too)."""
READ_PREFIXES = (
    genai.GEN_AI_OPERATION_NAME, genai.GEN_AI_REQUEST_MODEL, genai.GEN_AI_RESPONSE_MODEL, "gen_ai.usage.",
    genai.GEN_AI_INPUT_MESSAGES, genai.GEN_AI_OUTPUT_MESSAGES, genai.GEN_AI_SYSTEM_INSTRUCTIONS, PROMPT, COMPLETION,
    genai.GEN_AI_TOOL_NAME, "gen_ai.tool.call.", genai.GEN_AI_RETRIEVAL_DOCUMENTS, genai.GEN_AI_CONVERSATION_ID,
    *USER_IDS,
)  # fmt: skip
"""The GenAI attributes read (a reader may skip others: ``gen_ai.tool.definitions`` can be large)."""


def genai_kind(attributes: Attributes) -> str:
    """The OpenInference kind a span's ``gen_ai.operation.name`` stands for; an LLM call for a span with the
    older indexed messages (OpenLLMetry's wrote no operation name); empty when neither says."""
    kind = _KINDS.get(str(attributes.get(genai.GEN_AI_OPERATION_NAME) or ""))
    if kind:
        return kind
    if any(key.startswith((PROMPT, COMPLETION)) for key in attributes):
        return OpenInferenceSpanKindValues.LLM.value
    return ""


def read_genai(span: Span) -> str | None:
    """Add to ``span`` the OpenInference attributes its GenAI attributes and events say (none that it already
    has); the convention it was read with, None for a span that carries neither."""
    attributes = span.attributes
    if any(key.startswith(_OPENINFERENCE_OWN) for key in attributes):
        return OPENINFERENCE
    convention = GENAI if any(key.startswith("gen_ai.") for key in attributes) else None
    for target, sources in _USAGE:
        value = next((attributes[name] for name in sources if attributes.get(name) is not None), None)
        if value is not None:
            attributes.setdefault(target, value)
    read = _messages(span)
    if read is not None:
        convention, inputs, outputs = read
        _put_messages(attributes, SpanAttributes.LLM_INPUT_MESSAGES, inputs)
        _put_messages(attributes, SpanAttributes.LLM_OUTPUT_MESSAGES, outputs)
    _put_documents(attributes, parsed(attributes.get(genai.GEN_AI_RETRIEVAL_DOCUMENTS)))
    user = next((attributes[name] for name in USER_IDS if attributes.get(name) not in (None, "")), None)
    if user is not None:
        attributes.setdefault(SpanAttributes.USER_ID, user)
    return convention


def _messages(span: Span) -> tuple[str, list[Message], list[Message]] | None:
    """(convention, input messages, output messages) of the first form the span writes them in."""
    attributes = span.attributes
    if genai.GEN_AI_INPUT_MESSAGES in attributes or genai.GEN_AI_OUTPUT_MESSAGES in attributes:
        system = from_parts(attributes.get(genai.GEN_AI_SYSTEM_INSTRUCTIONS), default_role="system")
        inputs = system + from_parts(attributes.get(genai.GEN_AI_INPUT_MESSAGES))
        return GENAI, inputs, from_parts(attributes.get(genai.GEN_AI_OUTPUT_MESSAGES), default_role="assistant")
    if any(key.startswith((PROMPT, COMPLETION)) for key in attributes):
        return GENAI_INDEXED, from_indexed(attributes, PROMPT), from_indexed(attributes, COMPLETION)
    inputs, outputs = from_events(span.events)
    for event in span.events:
        if event.name == _OLD_PROMPT_EVENT:
            inputs += _old_event_messages(event.fields.get(genai.GEN_AI_PROMPT), "user")
        elif event.name == _OLD_COMPLETION_EVENT:
            outputs += _old_event_messages(event.fields.get(genai.GEN_AI_COMPLETION), "assistant")
    return (GENAI_EVENTS, inputs, outputs) if inputs or outputs else None


def _old_event_messages(value: Any, role: str) -> list[Message]:
    value = parsed(value)
    if isinstance(value, list) and all(isinstance(item, dict) and "role" in item for item in value):
        return from_parts(value, default_role=role)
    text = text_of(value)
    return [Message(role=role, text=text)] if text is not None else []


def _put_messages(attributes: Attributes, prefix: str, messages: list[Message]) -> None:
    if any(key.startswith(f"{prefix}.") for key in attributes):
        return
    for index, message in enumerate(messages):
        at = f"{prefix}.{index}."
        attributes[at + MessageAttributes.MESSAGE_ROLE] = message.role
        if message.text is not None:
            attributes[at + MessageAttributes.MESSAGE_CONTENT] = message.text
        for number, (name, arguments) in enumerate(message.tool_calls):
            call = f"{at}{MessageAttributes.MESSAGE_TOOL_CALLS}.{number}."
            attributes[call + ToolCallAttributes.TOOL_CALL_FUNCTION_NAME] = name
            if arguments is not None:
                attributes[call + ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON] = arguments


def _put_documents(attributes: Attributes, documents: Any) -> None:
    """``gen_ai.retrieval.documents`` (``[{"id", "score", "content"?}]``) as OpenInference documents."""
    if not isinstance(documents, list) or any(key.startswith(f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.")
                                              for key in attributes):  # fmt: skip
        return
    for index, document in enumerate(item for item in documents if isinstance(item, dict)):
        at = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{index}."
        for target, source in ((DocumentAttributes.DOCUMENT_ID, "id"), (DocumentAttributes.DOCUMENT_SCORE, "score"),
                               (DocumentAttributes.DOCUMENT_METADATA, "metadata")):  # fmt: skip
            if document.get(source) is not None:
                attributes[at + target] = document[source]
        text = text_of(document.get("content", document.get("text")))
        if text is not None:
            attributes[at + DocumentAttributes.DOCUMENT_CONTENT] = text
