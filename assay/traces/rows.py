"""From a mapped trace to a test-lab row, with every text read from the traces masked, and the import report
masked the same way."""

from collections import Counter, defaultdict
from collections.abc import Mapping

from assay.calls.pricing import cost_of, price_for
from assay.models import ConversationTurn, ModelPrice, RetrievedChunk, TestCase, TestLabRow, ToolCall
from assay.traces.mapping import MappedTrace
from assay.traces.privacy import Masker
from assay.traces.report import TraceImportReport

DEFAULT_SERVICE = "production"
"""The model key of spans whose resource names no ``service.name``."""


def lab_row(
    trace: MappedTrace,
    turns: list[ConversationTurn],
    format: str,
    masker: Masker,
    prices: Mapping[str, ModelPrice] | None = None,
) -> TestLabRow:
    """The row of one request; ``masked`` records, per field, the kinds and counts of values masked in it. A
    request whose trace reports no cost is priced from ``prices`` and its token split, saying so."""
    found: defaultdict[str, Counter[str]] = defaultdict(Counter)

    def text(field: str, value: str | None) -> str | None:
        return masker.text(value, into=found[field])

    cost, cost_source = _cost(trace, prices or {})
    case = TestCase(
        key=text("key", trace.trace_id) or trace.trace_id,
        prompt=text("question", trace.question) or "",
        turns=[_masked_turn(turn, masker, found["turns"]) for turn in turns],
        categories=[text("route", trace.route) or ""] if trace.route else [],
        generator=f"production traces ({_read_with(format, trace.conventions)})",
    )
    row = TestLabRow(
        test_case=case,
        model_key=text("model_key", trace.service) or DEFAULT_SERVICE,
        actual_output=text("answer", trace.answer),
        context=[_masked_chunk(chunk, masker, found["context"]) for chunk in trace.documents],
        actual_duration=trace.latency_s,
        cost=cost,
        cost_source=cost_source,
        input_tokens=trace.input_tokens,
        output_tokens=trace.output_tokens,
        cached_input_tokens=trace.cached_input_tokens,
        reasoning_tokens=trace.reasoning_tokens,
        tool_calls=[_masked_call(call, masker, found["tool_calls"]) for call in trace.tool_calls],
        error=text("error", trace.error),
        answer_absent=text("answer_absent", trace.answer_absent),
        session_id=text("session_id", trace.session_id),
        user_id=text("user_id", trace.user_id),
        model_name=text("model_name", trace.model_name),
    )
    masked = {field: dict(sorted(counts.items())) for field, counts in found.items() if counts}
    return row.model_copy(update={"masked": masked}) if masked else row


def _cost(trace: MappedTrace, prices: Mapping[str, ModelPrice]) -> tuple[float | None, str | None]:
    """The reported cost, else the price table's for the request's model and tokens (cached input at the cached
    price), else none."""
    if trace.cost is not None:
        return trace.cost, "reported"
    price = price_for(prices, trace.model_name)
    if price is None or trace.input_tokens is None or trace.output_tokens is None:
        return None, None
    return cost_of(price, trace.input_tokens, trace.output_tokens, trace.cached_input_tokens), "price_table"


def _read_with(format: str, conventions: tuple[str, ...]) -> str:
    """The format, and the conventions the request's spans were read with where the format has several."""
    read = ", ".join(conventions)
    return format if read in ("", format) else f"{format}: {read}"


def unique_keys(rows: list[TestLabRow]) -> list[TestLabRow]:
    """Trace ids are unique, but two that differ only inside what was masked would not be: the later one gets
    a counter (stable, rows being in start order)."""
    seen: Counter[str] = Counter()
    unique = []
    for row in rows:
        key = row.test_case.key
        seen[key] += 1
        if seen[key] > 1:
            case = row.test_case.model_copy(update={"key": f"{key} ({seen[key]})"})
            row = row.model_copy(update={"test_case": case})
        unique.append(row)
    return unique


def _masked_chunk(chunk: RetrievedChunk, masker: Masker, found: Counter[str]) -> RetrievedChunk:
    return chunk.model_copy(update={
        "text": masker.text(chunk.text, into=found) or "", "doc_uri": masker.text(chunk.doc_uri, into=found) or "",
    })  # fmt: skip


def masked_report(report: TraceImportReport, masker: Masker) -> TraceImportReport:
    """The report with every text read from the traces masked (ids, span names, strata), as the rows were; its
    counts of what was masked are the rows' (the report's copies are not counted again)."""
    masked = dict(sorted(masker.counts.items()))
    files, format = report.files, report.format
    data = masker.data(report.model_dump(exclude={"files", "format", "masked", "window"}), count=False)
    return TraceImportReport.model_validate({**data, "files": files, "format": format, "window": report.window,
                                             "masked": masked})  # fmt: skip


def _masked_turn(turn: ConversationTurn, masker: Masker, found: Counter[str]) -> ConversationTurn:
    return turn.model_copy(update={
        "content": masker.text(turn.content, into=found) or "",
        "context": [masker.text(text, into=found) or "" for text in turn.context],
    })  # fmt: skip


def _masked_call(call: ToolCall, masker: Masker, found: Counter[str]) -> ToolCall:
    return call.model_copy(update={
        "name": masker.text(call.name, into=found) or "", "span_id": masker.text(call.span_id, into=found),
        "arguments": masker.data(call.arguments, into=found),
        "arguments_text": masker.text(call.arguments_text, into=found),
        "output": masker.text(call.output, into=found), "error": masker.text(call.error, into=found),
    })  # fmt: skip
