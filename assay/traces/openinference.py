"""OpenInference span JSON, as Arize Phoenix exports and serves spans: one span a line (JSON Lines), a JSON
list of spans, or a page of its REST API (``GET /v1/projects/{id}/spans``: ``{"data": [...]}``).

A span carries its ids under ``context``, its kind as ``span_kind``, ISO 8601 times with a zone, and its
attributes either nested (``{"llm": {"token_count": {"prompt": 3}}}``, as Phoenix stores them) or as dotted
keys; both become the dotted keys the mapping reads. Each span is checked on its own, so an error names the
file, the line (or list index) and the span.
"""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

from assay.formats.errors import json_path, preview
from assay.traces.documents import documents
from assay.traces.otlp import SPAN_KIND_ATTRIBUTE
from assay.traces.spans import Span, TraceFileError, flatten, span_error, validated

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
Id = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^\S+$")]
ParentId = Annotated[str, Field(max_length=128, pattern=r"^\S*$")]
"""Empty, as some exports write a root's, or an id."""


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


class _Context(BaseModel):
    model_config = ConfigDict(extra="ignore")

    trace_id: Id
    span_id: Id


class OpenInferenceSpan(BaseModel):
    """The fields of a Phoenix span that the import reads; any others are ignored."""

    model_config = ConfigDict(extra="ignore")

    name: str
    context: _Context
    parent_id: ParentId | None = None
    span_kind: Annotated[str, BeforeValidator(_upper)] = ""
    start_time: AwareDatetime
    end_time: AwareDatetime | None = None
    status_code: Annotated[Literal["OK", "ERROR", "UNSET"], BeforeValidator(_upper)] = "UNSET"
    status_message: str | None = ""
    attributes: dict[str, Any] = Field(default_factory=dict)


def read_openinference(path: Path) -> Iterator[Span]:
    """Every span of an OpenInference span file, in file order."""
    for line, document in documents(path):
        where = f"line {line}"
        if isinstance(document, dict) and "data" in document:
            page = document["data"]
            if not isinstance(page, list):
                raise TraceFileError(path, f"{where}, data", f"expected a list of spans, got {preview(page)}")
            items = [(json_path("data", index), raw) for index, raw in enumerate(page)]
        elif isinstance(document, list):
            items = [(json_path(index), raw) for index, raw in enumerate(document)]
        else:
            items = [("", document)]
        for here, raw in items:
            yield _span(raw, path, f"{where}, {here}" if here else where)


def _span(raw: Any, path: Path, location: str) -> Span:
    if not isinstance(raw, dict):
        raise TraceFileError(path, location, f"expected an OpenInference span (an object with name, context, "
                             f"start_time...), got {preview(raw)}")  # fmt: skip
    span_id = _claimed_id(raw)
    span = validated(OpenInferenceSpan, raw, path, location, span_id)
    start_ns = _nanoseconds(span.start_time)
    end_ns = _nanoseconds(span.end_time) if span.end_time else start_ns
    if end_ns < start_ns:
        raise span_error(path, location, span.context.span_id, "end_time is before start_time")
    attributes = flatten(span.attributes)
    kind = span.span_kind or str(attributes.get(SPAN_KIND_ATTRIBUTE) or "").upper()
    return Span(
        trace_id=span.context.trace_id,
        span_id=span.context.span_id,
        parent_id=span.parent_id or None,
        name=span.name,
        start_ns=start_ns,
        end_ns=end_ns,
        kind=kind,
        status=span.status_code,
        status_message=span.status_message or "",
        attributes=attributes,
        service=str(attributes.get("service.name") or ""),
        where=f"{path}: {location}",
    )


def _claimed_id(raw: dict[str, Any]) -> str | None:
    """The span id as written, for error messages about a span that does not validate."""
    context = raw.get("context")
    claimed = context.get("span_id") if isinstance(context, dict) else None
    return claimed if isinstance(claimed, str) and claimed else None


def _nanoseconds(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND * 1000
