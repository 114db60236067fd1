"""``assay traces import``: exported traces in, a test lab out, with a report of everything read and left out.

Each trace whose root span is in the files becomes one test case answered by the service that emitted it
(``service.name``), keyed by its trace id, so importing the same files twice gives the same lab. Traces of one
session (``session.id``) become a conversation: a request's case carries the requests and answers before it
as turns, taken from every trace read (before the window and the sample), so a sampled later turn keeps its
context.
"""

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from assay.formats.errors import FormatError
from assay.models import ConversationTurn, ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow, ToolCall
from assay.models.hosts import TRACES_HOST_TYPE
from assay.traces.mapping import MappedTrace, map_trace, mapped_attributes
from assay.traces.mlflow import read_mlflow
from assay.traces.openinference import read_openinference
from assay.traces.otlp import read_otlp
from assay.traces.privacy import Masker
from assay.traces.report import LeftOut, SpanCount, Stratum, TraceImportReport
from assay.traces.sampling import SampleSize, StratumKey, in_window, stratified_sample
from assay.traces.spans import Span

DEFAULT_SERVICE = "production"
"""The model key of spans whose resource names no ``service.name``."""
TRACE_SUFFIXES = (".json", ".jsonl")

Reader = Callable[[Path], Iterator[Span]]
READERS: dict[str, Reader] = {"otlp-json": read_otlp, "openinference": read_openinference, "mlflow": read_mlflow}
"""Trace formats by the name ``--format`` takes."""


@dataclass(frozen=True)
class ImportOptions:
    format: str = "otlp-json"
    name: str | None = None
    sample: SampleSize | None = None
    seed: int = 0
    since: datetime | None = None
    until: datetime | None = None
    stratify_by: StratumKey = "route"
    mask_pii: bool = True


def trace_files(sources: Sequence[Path]) -> list[Path]:
    """The files to read: each file as given, each folder's ``*.json``/``*.jsonl`` files (recursively, sorted)."""
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            found = sorted(path for path in source.rglob("*") if path.suffix.lower() in TRACE_SUFFIXES)
            if not found:
                raise FormatError(source, "", "the folder holds no .json or .jsonl trace file")
            files.extend(found)
        elif source.exists():
            files.append(source)
        else:
            raise FormatError(source, "", "no such file or folder")
    return files


def import_traces(files: Sequence[Path], options: ImportOptions) -> tuple[TestLab, TraceImportReport]:
    if options.format not in READERS:
        raise ValueError(f"unknown trace format {options.format!r}; known: {', '.join(READERS)}")
    report = TraceImportReport(
        format=options.format,
        files=[str(path) for path in files],
        window={"since": _iso(options.since), "until": _iso(options.until)},
        sample=_describe(options.sample),
        seed=options.seed if options.sample else None,
        stratified_by=options.stratify_by if options.sample else None,
        pii_masked=options.mask_pii,
    )
    mapped = _map(_read(files, READERS[options.format], report), report)  # the spans go once mapped
    history = _conversations(mapped, report)
    outside = LeftOut(reason="started outside --since/--until")
    in_range = []
    for trace in mapped:
        if in_window(trace.started_at, options.since, options.until):
            in_range.append(trace)
        else:
            outside.add(trace.trace_id)
    _note(report, outside)
    chosen = _sample(in_range, options, report)
    masker = Masker(pii=options.mask_pii)
    rows = _unique_keys([_row(trace, history.get(trace.trace_id, []), options.format, masker) for trace in chosen])
    report.cases = len(rows)
    report.cases_with_error = sum(1 for row in rows if row.error)
    services = sorted({row.model_key for row in rows})
    name = masker.text(options.name or (f"traces-{Path(files[0]).stem}" if files else "traces")) or "traces"
    report = _masked_report(report, masker)
    lab = TestLab(
        name=name,
        description=f"{len(rows)} production requests imported from {len(files)} {options.format} trace file(s).",
        models=[ModelHost(key=service, type=TRACES_HOST_TYPE, name=service) for service in services],
        rows=rows,
    )
    return lab, report


def _read(files: Sequence[Path], reader: Reader, report: TraceImportReport) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    kinds: Counter[str] = Counter()
    duplicates = LeftOut(reason="span read twice (same trace and span id): the later copy is ignored")
    for path in files:
        for span in reader(path):
            report.spans += 1
            key = (span.trace_id, span.span_id)
            if key in seen:
                duplicates.add(f"{span.trace_id}/{span.span_id}")
                continue
            seen.add(key)
            span.attributes = mapped_attributes(span)
            kinds[span.kind or "unknown"] += 1
            traces[span.trace_id].append(span)
    report.spans_by_kind = dict(sorted(kinds.items()))
    report.traces = len(traces)
    _note(report, duplicates)
    return traces


def _map(traces: dict[str, list[Span]], report: TraceImportReport) -> list[MappedTrace]:
    no_root = LeftOut(reason="root span missing from the files (an incomplete export)")
    several = LeftOut(reason="more than one root span")
    no_question = LeftOut(reason="no question found (no input.value on the root, no user message to an LLM)")
    unmapped: Counter[tuple[str, str]] = Counter()
    mapped: list[MappedTrace] = []
    for trace_id, spans in traces.items():
        ids = {span.span_id for span in spans}
        report.orphan_spans += sum(1 for span in spans if span.parent_id and span.parent_id not in ids)
        roots = [span for span in spans if not span.parent_id]
        if not roots:
            no_root.add(trace_id)
            continue
        if len(roots) > 1:
            several.add(trace_id)
            continue
        trace = map_trace(roots[0], spans)
        if trace.question is None:
            no_question.add(trace_id)
            continue
        unmapped.update(trace.unmapped)
        mapped.append(trace)
    for reason in (no_root, several, no_question):
        _note(report, reason)
    report.unmapped_spans = [
        SpanCount(kind=kind, name=name, count=count) for (kind, name), count in sorted(unmapped.items())
    ]
    return sorted(mapped, key=lambda trace: (trace.started_at, trace.trace_id))


def _conversations(mapped: list[MappedTrace], report: TraceImportReport) -> dict[str, list[ConversationTurn]]:
    """Per trace id, the turns of its session before it (``mapped`` is in start order)."""
    sessions: dict[str, list[MappedTrace]] = defaultdict(list)
    for trace in mapped:
        if trace.session_id:
            sessions[(trace.service, trace.session_id)].append(trace)
    history: dict[str, list[ConversationTurn]] = {}
    for requests in sessions.values():
        turns: list[ConversationTurn] = []
        for trace in requests:
            history[trace.trace_id] = list(turns)
            turns.append(ConversationTurn(role="user", content=trace.question or ""))
            if trace.answer is not None:
                passages = [chunk.text for chunk in trace.documents]
                turns.append(ConversationTurn(role="assistant", content=trace.answer, context=passages))
    report.sessions = sum(1 for requests in sessions.values() if len(requests) > 1)
    return history


def _sample(traces: list[MappedTrace], options: ImportOptions, report: TraceImportReport) -> list[MappedTrace]:
    if options.sample is None:
        return traces
    stratum: Callable[[MappedTrace], str] = {
        "route": lambda trace: trace.route,
        "model": lambda trace: trace.model_name or "unknown model",
        "service": lambda trace: trace.service or DEFAULT_SERVICE,
        "none": lambda trace: "all",
    }[options.stratify_by]
    sample, strata = stratified_sample(traces, options.sample, options.seed, stratum, lambda trace: trace.trace_id)
    report.strata = [Stratum(name=name, traces=total, sampled=count) for name, (total, count) in strata.items()]
    not_sampled = LeftOut(reason="not drawn in the sample")
    drawn = {trace.trace_id for trace in sample}
    for trace in traces:
        if trace.trace_id not in drawn:
            not_sampled.add(trace.trace_id)
    _note(report, not_sampled)
    return sample


def _row(trace: MappedTrace, turns: list[ConversationTurn], format: str, masker: Masker) -> TestLabRow:
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


def _unique_keys(rows: list[TestLabRow]) -> list[TestLabRow]:
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


def _masked_report(report: TraceImportReport, masker: Masker) -> TraceImportReport:
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


def _note(report: TraceImportReport, left_out: LeftOut) -> None:
    if left_out.count:
        report.left_out.append(left_out)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _describe(size: SampleSize | None) -> str | None:
    if size is None:
        return None
    return str(size.count) if size.count is not None else f"{size.fraction:g}"
