"""The span every trace format is read into, and the error every reader raises.

A span keeps only what the mapping to test cases reads: its ids, name, OpenInference kind, times, status and
attributes (flattened to dotted keys, as OpenTelemetry carries them). Readers yield spans one at a time so a
large export is never held twice in memory: once as parsed JSON and again as spans.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay.formats.errors import FormatError, from_validation_error, json_path

ModelT = TypeVar("ModelT", bound=BaseModel)

TraceFileError = FormatError
"""A trace file that cannot be read: it names the file, the line or span, and what was expected."""

Attributes = dict[str, Any]


@dataclass(slots=True)
class SpanEvent:
    """A GenAI event of a span: a span event, or a log record the span's context was set on (the OpenTelemetry
    GenAI conventions' event form of the messages, ``gen_ai.user.message``, ``gen_ai.choice``...)."""

    name: str
    fields: Attributes
    """The event's attributes and, for a log record, its body (an object's fields; anything else as ``body``),
    values as written: a JSON text stays text."""


@dataclass(slots=True)
class LogEvent:
    """A log record that belongs to a span (its trace and span id), read apart from it: joined to the span once
    every file is read."""

    trace_id: str
    span_id: str
    event: SpanEvent


@dataclass(slots=True)
class Span:
    """One span of a trace, as read from a file."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    kind: str = ""
    """The OpenInference span kind (``LLM``, ``RETRIEVER``, ``TOOL``, ``CHAIN``, ``AGENT``...), upper case; empty
    when the span declares none."""
    status: str = "UNSET"
    """``OK``, ``ERROR`` or ``UNSET``."""
    status_message: str = ""
    attributes: Attributes = field(default_factory=dict)
    service: str = ""
    """The resource's ``service.name``: which application emitted the span."""
    where: str = ""
    """Where the span was read: ``<file>: line N`` (for error messages and the import report)."""
    events: list[SpanEvent] = field(default_factory=list)
    """The span's GenAI events (others are not read), in time order."""

    @property
    def duration_s(self) -> float:
        return max(self.end_ns - self.start_ns, 0) / 1e9


def flatten(value: Any, prefix: str = "", into: Attributes | None = None) -> Attributes:
    """Nested attribute objects (``{"llm": {"token_count": {"prompt": 3}}}``, lists included) as the dotted keys
    OpenTelemetry uses (``llm.token_count.prompt``); already-dotted keys pass through unchanged."""
    into = {} if into is None else into
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else str(key), into)
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for index, item in enumerate(value):
            flatten(item, f"{prefix}.{index}", into)
    else:
        into[prefix] = value
    return into


def span_error(path: Path | str, where: str, span_id: str | None, message: str) -> TraceFileError:
    """A `TraceFileError` at ``where`` (a line or JSON path) naming the span when its id is known."""
    location = f"{where}, span {span_id}" if span_id else where
    return TraceFileError(path, location, message)


def validated(model: type[ModelT], raw: dict[str, Any], path: Path, location: str, span_id: str | None) -> ModelT:
    """``raw`` read as one span of a format's own shape; a problem is located at the span and its field."""
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        named = f"{location}, span {span_id}" if span_id else location
        raise from_validation_error(
            error, path, model=model, where=lambda loc: f"{named}, {json_path(*loc)}" if loc else named
        ) from None
