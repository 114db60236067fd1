"""From a mapped trace to a test-lab row, with every text read from the traces masked, and the import report
masked the same way."""

from collections import Counter

from assay.models import ConversationTurn, RetrievedChunk, TestCase, TestLabRow, ToolCall
from assay.traces.mapping import MappedTrace
from assay.traces.privacy import Masker
from assay.traces.report import TraceImportReport

DEFAULT_SERVICE = "production"
"""The model key of spans whose resource names no ``service.name``."""


def lab_row(trace: MappedTrace, turns: list[ConversationTurn], format: str, masker: Masker) -> TestLabRow:
    case = TestCase(
        key=masker.text(trace.trace_id) or trace.trace_id,
        prompt=masker.text(trace.question) or "",
        turns=[_masked_turn(turn, masker) for turn in turns],
        categories=[masker.text(trace.route) or ""] if trace.route else [],
        generator=f"production traces ({format})",
    )
    return TestLabRow(
        test_case=case,
        model_key=masker.text(trace.service) or DEFAULT_SERVICE,
        actual_output=masker.text(trace.answer),
        context=[_masked_chunk(chunk, masker) for chunk in trace.documents],
        actual_duration=trace.latency_s,
        cost=trace.cost,
        cost_source="reported" if trace.cost is not None else None,
        input_tokens=trace.input_tokens,
        output_tokens=trace.output_tokens,
        tool_calls=[_masked_call(call, masker) for call in trace.tool_calls],
        error=masker.text(trace.error),
        model_name=masker.text(trace.model_name),
    )


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


def _masked_chunk(chunk: RetrievedChunk, masker: Masker) -> RetrievedChunk:
    return chunk.model_copy(update={"text": masker.text(chunk.text) or "", "doc_uri": masker.text(chunk.doc_uri) or ""})


def masked_report(report: TraceImportReport, masker: Masker) -> TraceImportReport:
    """The report with every text read from the traces masked (ids, span names, strata), as the rows were; its
    counts of what was masked are the rows' (the report's copies are not counted again)."""
    masked = dict(sorted(masker.counts.items()))
    files, format = report.files, report.format
    data = masker.data(report.model_dump(exclude={"files", "format", "masked", "window"}), count=False)
    return TraceImportReport.model_validate({**data, "files": files, "format": format, "window": report.window,
                                             "masked": masked})  # fmt: skip


def _masked_turn(turn: ConversationTurn, masker: Masker) -> ConversationTurn:
    return turn.model_copy(update={
        "content": masker.text(turn.content) or "", "context": [masker.text(text) or "" for text in turn.context],
    })  # fmt: skip


def _masked_call(call: ToolCall, masker: Masker) -> ToolCall:
    return call.model_copy(update={
        "name": masker.text(call.name) or "", "span_id": masker.text(call.span_id),
        "arguments": masker.data(call.arguments), "arguments_text": masker.text(call.arguments_text),
        "output": masker.text(call.output), "error": masker.text(call.error),
    })  # fmt: skip
