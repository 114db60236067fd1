"""OpenTelemetry traces in OTLP JSON: ``ExportTraceServiceRequest`` documents (``{"resourceSpans": [...]}``), one
per line as the Collector's file exporter writes them, or one per file. ``ExportLogsServiceRequest`` documents
(``{"resourceLogs": [...]}``) may sit beside them, in the same files or others: their GenAI event records
(``gen_ai.user.message``, ``gen_ai.choice``...: the conventions' event form of the messages) are read and joined
to their spans by trace and span id; other log records are skipped.

Each span is parsed with the OTLP protobuf definitions (``opentelemetry-proto``), so field names, enum values
and 64-bit integers as strings follow the specification rather than a hand-written reading of it. OTLP JSON
writes trace and span ids as hex, where protobuf's own JSON mapping writes bytes as base64: ids are accepted in
either form (their lengths tell them apart: 32 or 16 hex characters, 24 or 12 base64 ones).
"""

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseDict, ParseError
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span as OtlpSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from assay.formats.errors import json_path, preview
from assay.traces.documents import documents
from assay.traces.genai import genai_kind
from assay.traces.mapping import READ_PREFIXES
from assay.traces.spans import LogEvent, Span, SpanEvent, TraceFileError, span_error

SPAN_KIND_ATTRIBUTE = "openinference.span.kind"
_STATUS = {Status.STATUS_CODE_UNSET: "UNSET", Status.STATUS_CODE_OK: "OK", Status.STATUS_CODE_ERROR: "ERROR"}
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8, "trace_id": 16, "span_id": 8, "parent_span_id": 8}
GENAI_EVENT_PREFIX = "gen_ai."
"""Span events and log records read: the GenAI conventions' events (others carry nothing a case is built from)."""


def read_otlp(path: Path) -> Iterator[Span | LogEvent]:
    """Every span of an OTLP JSON file, and every GenAI log record, in file order."""
    for line, document in documents(path):
        where = f"line {line}"
        if isinstance(document, dict) and isinstance(_get(document, "resourceLogs"), list):
            yield from _log_events(document, path, where)
            continue
        if not isinstance(document, dict) or not isinstance(_get(document, "resourceSpans"), list):
            found = preview(document)
            raise TraceFileError(path, where, f'expected an OTLP JSON export {{"resourceSpans": [...]}} (or '
                                 f'{{"resourceLogs": [...]}}), got {found}')  # fmt: skip
        for r, resource_spans in enumerate(_get(document, "resourceSpans")):
            here = json_path("resourceSpans", r)
            _expect_object(resource_spans, path, where, here)
            service = _service_name(_parse(resource_spans.get("resource") or {}, Resource(), path, where, here))
            for s, scope_spans in enumerate(_get(resource_spans, "scopeSpans") or []):
                scope_here = json_path(here, "scopeSpans", s)
                _expect_object(scope_spans, path, where, scope_here)
                for index, raw in enumerate(_get(scope_spans, "spans") or []):
                    yield _span(raw, path, where, json_path(scope_here, "spans", index), service)


def _get(document: dict[str, Any], camel: str) -> Any:
    """A field by its JSON name or its proto name (OTLP JSON uses the former; both parse)."""
    if camel in document:
        return document[camel]
    return document.get("".join(f"_{char.lower()}" if char.isupper() else char for char in camel))


def _expect_object(value: Any, path: Path, where: str, here: str) -> None:
    if not isinstance(value, dict):
        raise TraceFileError(path, f"{where}, {here}", f"expected an object, got {preview(value)}")


def _span(raw: Any, path: Path, where: str, here: str, service: str) -> Span:
    location = f"{where}, {here}"
    _expect_object(raw, path, where, here)
    claimed = raw.get("spanId") or raw.get("span_id")
    span_id = claimed if isinstance(claimed, str) else None
    converted = _unread_left_out(raw)
    for name, size in _ID_FIELDS.items():
        if name in converted:
            converted[name] = _id_as_base64(converted[name], size, path, location, span_id, name)
    message = _parse(converted, OtlpSpan(), path, where, here, span_id)
    if len(message.trace_id) != 16 or len(message.span_id) != 8:
        raise span_error(path, location, span_id, "a span needs a traceId (16 bytes) and a spanId (8 bytes)")
    if message.end_time_unix_nano and message.end_time_unix_nano < message.start_time_unix_nano:
        raise span_error(path, location, message.span_id.hex(), "endTimeUnixNano is before startTimeUnixNano")
    attributes = _attributes(message.attributes)
    events = [SpanEvent(event.name, _attributes(event.attributes)) for event in message.events]
    return Span(
        trace_id=message.trace_id.hex(),
        span_id=message.span_id.hex(),
        parent_id=message.parent_span_id.hex() or None,
        name=message.name,
        start_ns=message.start_time_unix_nano,
        end_ns=message.end_time_unix_nano or message.start_time_unix_nano,
        kind=str(attributes.get(SPAN_KIND_ATTRIBUTE) or "").upper() or genai_kind(attributes),
        status=_STATUS.get(message.status.code, "UNSET"),
        status_message=message.status.message,
        attributes=attributes,
        service=service,
        where=f"{path}: {location}",
        events=events,
    )


def _unread_left_out(raw: dict[str, Any]) -> dict[str, Any]:
    """The span without what no case is built from (attributes outside `READ_PREFIXES`, events other than GenAI
    ones, links), which protobuf then need not parse: most of a large export's parse time goes to LLM request
    bodies and exception events nothing reads. A root span keeps every attribute (``--route-from attribute:``
    may name any). What is kept is parsed and checked in full."""
    kept = {key: value for key, value in raw.items() if key not in ("events", "links")}
    events = raw.get("events")
    if isinstance(events, list):
        kept["events"] = [event for event in events if not isinstance(event, dict) or _genai_event(event.get("name"))]
    attributes = raw.get("attributes")
    is_root = not (raw.get("parentSpanId") or raw.get("parent_span_id"))
    if isinstance(attributes, list) and not is_root:
        kept["attributes"] = [pair for pair in attributes if not isinstance(pair, dict) or _read(pair.get("key"))]
    return kept


def _genai_event(name: Any) -> bool:
    return isinstance(name, str) and name.startswith(GENAI_EVENT_PREFIX)


def _log_events(document: dict[str, Any], path: Path, where: str) -> Iterator[LogEvent]:
    """The GenAI event records of an OTLP logs export that name their span (a record without one cannot be
    joined to a request and is skipped, as other records are)."""
    for r, resource_logs in enumerate(_get(document, "resourceLogs")):
        here = json_path("resourceLogs", r)
        _expect_object(resource_logs, path, where, here)
        for s, scope_logs in enumerate(_get(resource_logs, "scopeLogs") or []):
            scope_here = json_path(here, "scopeLogs", s)
            _expect_object(scope_logs, path, where, scope_here)
            for index, raw in enumerate(_get(scope_logs, "logRecords") or []):
                record_here = json_path(scope_here, "logRecords", index)
                _expect_object(raw, path, where, record_here)
                event = _log_event(raw, path, f"{where}, {record_here}")
                if event is not None:
                    yield event


def _log_event(raw: dict[str, Any], path: Path, location: str) -> LogEvent | None:
    name = raw.get("eventName") or raw.get("event_name") or _event_name_attribute(raw)
    if not _genai_event(name):
        return None
    converted = {key: value for key, value in raw.items() if key not in ("traceId", "spanId", "trace_id", "span_id")}
    record = _parse(converted, LogRecord(), path, location, "")
    ids = [_hex_id(raw, name, size, path, location) for name, size in (("traceId", 16), ("spanId", 8))]
    if not all(ids):
        return None
    fields = _attributes(record.attributes)
    body = _value(record.body) if record.HasField("body") else None
    fields |= body if isinstance(body, dict) else ({} if body is None else {"body": body})
    return LogEvent(trace_id=ids[0], span_id=ids[1], event=SpanEvent(name, fields))


def _event_name_attribute(raw: dict[str, Any]) -> Any:
    """Before OTLP had ``eventName``, a log record named its event in the ``event.name`` attribute."""
    for pair in raw.get("attributes") or []:
        if isinstance(pair, dict) and pair.get("key") == "event.name":
            return (pair.get("value") or {}).get("stringValue")
    return None


def _hex_id(raw: dict[str, Any], name: str, size: int, path: Path, location: str) -> str:
    """A log record's trace or span id as hex (written hex or base64); empty when it has none."""
    value = raw.get(name) or raw.get("".join(f"_{char.lower()}" if char.isupper() else char for char in name))
    if not value:
        return ""
    if isinstance(value, str) and len(value) == 2 * size:
        try:
            return bytes.fromhex(value).hex()
        except ValueError:
            pass
    try:
        decoded = base64.b64decode(str(value), validate=True)
    except ValueError:
        decoded = b""
    if len(decoded) != size:
        raise TraceFileError(path, f"{location}.{name}", f"{value!r} is not a {size}-byte id (hex or base64)")
    return decoded.hex()


def _read(key: Any) -> bool:
    return isinstance(key, str) and key.startswith(READ_PREFIXES)


def _id_as_base64(value: Any, size: int, path: Path, location: str, span_id: str | None, name: str) -> Any:
    """A hex id (OTLP JSON) as the base64 protobuf's JSON parser reads. An id of any other length passes through:
    base64 (4/3 of the size) parses, anything else fails the parse with protobuf's message."""
    if not isinstance(value, str) or len(value) != 2 * size:
        return value
    try:
        return base64.b64encode(bytes.fromhex(value)).decode("ascii")
    except ValueError:
        raise span_error(path, f"{location}.{name}", span_id, f"{value!r} is not a hex id") from None


def _parse(document: dict[str, Any], message: Any, path: Path, where: str, here: str, span_id: str | None = None):
    try:
        return ParseDict(document, message, ignore_unknown_fields=False)
    except (ParseError, TypeError, ValueError, OverflowError, RecursionError) as error:
        # protobuf raises more than ParseError on some values (a number too large for its field, say)
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        kind = message.DESCRIPTOR.name
        raise span_error(path, f"{where}, {here}", span_id, f"not an OTLP {kind}: {detail}") from None


def _service_name(resource: Resource) -> str:
    return str(_attributes(resource.attributes).get("service.name") or "")


def _attributes(pairs: Any) -> dict[str, Any]:
    """Key-value pairs as a flat dict (a nested key-value list becomes dotted keys, as in OpenInference)."""
    flat: dict[str, Any] = {}
    for pair in pairs:
        _put(flat, pair.key, pair.value)
    return flat


def _put(flat: dict[str, Any], key: str, value: AnyValue) -> None:
    which = value.WhichOneof("value")
    if which == "kvlist_value":
        for inner in value.kvlist_value.values:
            _put(flat, f"{key}.{inner.key}", inner.value)
    else:
        flat[key] = _value(value)


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return {pair.key: _value(pair.value) for pair in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, which)
