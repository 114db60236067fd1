"""Chat messages as the OpenTelemetry GenAI conventions write them, in each of their three forms, read into one
shape: a role, the text, and the tool calls asked for.

- current attributes: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON: ``{"role", "parts": [{"type":
  "text", "content"}, {"type": "tool_call", "name", "arguments"}...]}``) and ``gen_ai.system_instructions``;
- events (log records, or span events): ``gen_ai.{system,user,assistant,tool}.message`` and ``gen_ai.choice``,
  whose body holds ``content`` and ``tool_calls`` (``{"function": {"name", "arguments"}}``);
- the older indexed attributes OpenLLMetry wrote: ``gen_ai.prompt.N.role`` / ``.content`` / ``.tool_calls.M.name``,
  ``gen_ai.completion.N.*``.

A message's content may be a text, a list of parts or blocks (``{"type": "text", "text": ...}``), or a JSON text
of either: the text is what its text parts say, joined; other parts (images, files) carry none.
"""

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from assay.traces.spans import SpanEvent

MESSAGE_EVENT = re.compile(r"^gen_ai\.(system|user|assistant|tool)\.message$")
CHOICE_EVENT = "gen_ai.choice"
"""Event names of the GenAI conventions' event form (the installed ``opentelemetry-semantic-conventions`` no
longer lists event names, so they are written out here, as the conventions name them)."""
_TEXT_PARTS = ("text", "content")


@dataclass
class Message:
    role: str
    text: str | None = None
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    """``(name, arguments)`` of each call asked for, arguments as written (an object or a JSON text)."""


def parsed(value: Any) -> Any:
    """A JSON text (object or list) as the value it holds; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def text_of(content: Any) -> str | None:
    """The text of a message content: a text, a part, a list of parts (their texts joined by a blank line)."""
    content = parsed(content)
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if content.get("type") not in (None, "text", "input_text", "output_text"):
            return None
        found = next((content[key] for key in _TEXT_PARTS if isinstance(content.get(key), str)), None)
        return found
    if isinstance(content, list):
        texts = [text for part in content if (text := text_of(part)) is not None]
        return "\n\n".join(texts) if texts else None
    return None


def from_parts(messages: Any, *, default_role: str = "user") -> list[Message]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` (or ``gen_ai.system_instructions``, a list of parts
    with no role: one system message)."""
    messages = parsed(messages)
    if not isinstance(messages, list):
        return []
    if messages and all(isinstance(item, dict) and "role" not in item for item in messages):
        text = text_of(messages)
        return [Message(role=default_role, text=text)] if text is not None else []
    read = []
    for item in messages:
        if not isinstance(item, dict):
            continue
        parts = item.get("parts") if isinstance(item.get("parts"), list) else item.get("content")
        calls = [(str(part.get("name")), part.get("arguments")) for part in parts or []
                 if isinstance(part, dict) and part.get("type") == "tool_call" and part.get("name")]  # fmt: skip
        calls += _openai_calls(item.get("tool_calls"))
        read.append(Message(role=str(item.get("role") or default_role), text=text_of(parts), tool_calls=calls))
    return read


def from_events(events: list[SpanEvent]) -> tuple[list[Message], list[Message]]:
    """The input messages (in order) and the output messages (by choice index) of a span's GenAI events."""
    inputs: list[Message] = []
    choices: list[tuple[int, Message]] = []
    for event in events:
        fields = {key: parsed(value) for key, value in event.fields.items()}
        role = MESSAGE_EVENT.match(event.name)
        if role:
            calls = _openai_calls(fields.get("tool_calls"))
            inputs.append(Message(role=str(fields.get("role") or role.group(1)), text=text_of(fields.get("content")),
                                  tool_calls=calls))  # fmt: skip
        elif event.name == CHOICE_EVENT:
            message = fields.get("message")
            message = message if isinstance(message, dict) else {"content": message}
            calls = _openai_calls(fields.get("tool_calls")) + _openai_calls(message.get("tool_calls"))
            index = fields.get("index")
            reply = Message(role=str(message.get("role") or "assistant"), text=text_of(message.get("content")),
                            tool_calls=calls)  # fmt: skip
            choices.append((index if isinstance(index, int) else len(choices), reply))
    return inputs, [message for _, message in sorted(choices, key=lambda item: item[0])]


def from_indexed(attributes: dict[str, Any], prefix: str) -> list[Message]:
    """``gen_ai.prompt.N.*`` or ``gen_ai.completion.N.*`` (``prefix`` with its trailing dot), by index."""
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)\.(.+)$")
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = pattern.match(key)
        if match:
            groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    read = []
    for index in sorted(groups):
        fields = groups[index]
        calls = _indexed_calls(fields)
        if "role" not in fields and "content" not in fields and not calls:
            continue
        read.append(Message(role=str(fields.get("role") or "user"), text=text_of(fields.get("content")),
                            tool_calls=calls))  # fmt: skip
    return read


def _indexed_calls(fields: dict[str, Any]) -> list[tuple[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        match = re.match(r"^tool_calls\.(\d+)\.(name|arguments)$", key)
        if match:
            calls.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [(str(call["name"]), call.get("arguments")) for _, call in sorted(calls.items()) if call.get("name")]


def _openai_calls(value: Any) -> list[tuple[str, Any]]:
    """Tool calls as chat completions write them (``{"function": {"name", "arguments"}}``), or flat."""
    calls = []
    for call in parsed(value) if isinstance(parsed(value), list) else []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        if function.get("name"):
            calls.append((str(function["name"]), function.get("arguments")))
    return calls
