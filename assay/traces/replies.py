"""The question and the answer a span records, by the OpenInference conventions: ``input.value`` /
``output.value`` (a text, or a JSON value that carries one: a chat request's last user message, an ``{"answer":
...}`` object, a chat completion's first choice) and an LLM span's messages. A reply that asks for tools instead
of answering is told apart from an answer, so its raw JSON never becomes one."""

import re
from typing import Any

import orjson
from openinference.semconv.trace import MessageAttributes, SpanAttributes

from assay.traces.genai_messages import parsed as parsed_json
from assay.traces.spans import Span
from assay.traces.tool_calls import RequestedCall, indexed, requested

Reply = tuple[str | None, list[RequestedCall]]
"""A model's last reply: its text, or (text None) the tool calls it asked for instead."""
_QUESTION_KEYS = ("question", "query", "input", "prompt", "user_input", "message", "text")
_ANSWER_KEYS = ("answer", "output", "response", "content", "text", "result")
_MESSAGE = re.compile(r"^(\d+)\.(.+)$")


def _messages(attributes: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    prefix = f"{kind}."
    found = {key[len(prefix) :]: value for key, value in attributes.items() if key.startswith(prefix)}
    return indexed(found, _MESSAGE)


def last_user_message(attributes: dict[str, Any]) -> str | None:
    for message in reversed(_messages(attributes, SpanAttributes.LLM_INPUT_MESSAGES)):
        content = message.get(MessageAttributes.MESSAGE_CONTENT)
        if message.get(MessageAttributes.MESSAGE_ROLE) == "user" and isinstance(content, str):
            return content
    return None


def reply_of(span: Span) -> Reply | None:
    """An LLM span's reply: its first text, else the tool calls it asked for (an empty text beside calls is
    no answer)."""
    calls = requested(span)
    for message in _messages(span.attributes, SpanAttributes.LLM_OUTPUT_MESSAGES):
        content = message.get(MessageAttributes.MESSAGE_CONTENT)
        if isinstance(content, str) and (content.strip() or not calls):
            return content, []
    return (None, calls) if calls else None


def question_in(value: Any) -> str | None:
    return _unwrap(value, _QUESTION_KEYS, role="user")


def answer_in(value: Any) -> Reply | None:
    """The root's ``output.value``: a text, or the tool calls of a chat completion (or message) that asked for
    tools instead of answering; None for a chat completion with neither (the LLM spans may say more), never a
    chat completion's raw JSON."""
    parsed = parsed_json(value)
    message = _reply_message(parsed)
    if message is not None and not (isinstance(message.get("content"), str) and message["content"].strip()):
        calls = [(str(call["function"]["name"]), call["function"].get("arguments"))
                 for call in message.get("tool_calls") or []
                 if isinstance(call, dict) and isinstance(call.get("function"), dict)
                 and call["function"].get("name")]  # fmt: skip
        if calls or (isinstance(parsed, dict) and "choices" in parsed):
            return (None, calls) if calls else None
    text = _unwrap(value, _ANSWER_KEYS, role="assistant")
    return None if text is None else (text, [])


def _reply_message(parsed: Any) -> dict[str, Any] | None:
    """The assistant message of a chat completion (its first choice's), or an assistant message itself."""
    if isinstance(parsed, dict) and isinstance(parsed.get("choices"), list):
        first = parsed["choices"][0] if parsed["choices"] else {}
        message = first.get("message") if isinstance(first, dict) else None
        return message if isinstance(message, dict) else {}
    if isinstance(parsed, dict) and parsed.get("role") == "assistant":
        return parsed
    return None


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
