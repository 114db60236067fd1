"""``assay traces import``: exported traces in, a test lab out, with a report of everything read and left out.

Each trace whose root span is in the files becomes one test case answered by the service that emitted it
(``service.name``), keyed by its trace id, so importing the same files twice gives the same lab. Traces of one
session (``session.id``) become a conversation: a request's case carries the requests and answers before it
as turns, taken from every trace read (before the window and the sample), so a sampled later turn keeps its
context.

Memory does not grow with the export: spans wait on disk until every file is read (`assay.traces.spill`), then
each trace is mapped on its own and kept there too, and only a summary of each (id, start, route, service,
model, session) stays in memory to draw the sample from; the cases drawn, and the earlier requests of their
sessions, are read back to build the rows. A trace over ``max_trace_spans`` spans or ``max_trace_bytes`` is
left out, with the limit as its reason, without being read back.
"""

import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from assay.formats.errors import FormatError
from assay.models import ConversationTurn, ModelHost, ModelPrice, TestLab
from assay.models.hosts import TRACES_HOST_TYPE
from assay.models.traces import MASK_PII, MAX_TRACE_MIB, MAX_TRACE_SPANS, SAMPLE_SEED, STRATIFY_BY, TRACE_FORMAT
from assay.traces.mapping import ROUTE_FROM_SPAN_NAME, MappedTrace, check_route_from, map_trace, mapped_attributes
from assay.traces.mlflow import read_mlflow
from assay.traces.openinference import read_openinference
from assay.traces.otlp import read_otlp
from assay.traces.privacy import Masker
from assay.traces.report import LeftOut, SpanCount, Stratum, TraceImportReport
from assay.traces.rows import DEFAULT_SERVICE, lab_row, masked_report, unique_keys
from assay.traces.sampling import SampleSize, StratumKey, in_window, stratified_sample
from assay.traces.spans import LogEvent, Span
from assay.traces.spill import SpanSpill, span_spill

TRACE_SUFFIXES = (".json", ".jsonl")
NO_ROOT = "root span missing from the files (an incomplete export)"
NO_QUESTION = "no question found (no input.value on the root, no user message to an LLM)"

Reader = Callable[[Path], Iterator[Span | LogEvent]]
READERS: dict[str, Reader] = {"otlp-json": read_otlp, "openinference": read_openinference, "mlflow": read_mlflow}
"""Trace formats by the name ``--format`` takes."""


@dataclass(frozen=True)
class ImportOptions:
    format: str = TRACE_FORMAT
    name: str | None = None
    sample: SampleSize | None = None
    seed: int = SAMPLE_SEED
    since: datetime | None = None
    until: datetime | None = None
    stratify_by: StratumKey = STRATIFY_BY
    mask_pii: bool = MASK_PII
    route_from: str = ROUTE_FROM_SPAN_NAME
    """``span-name`` (the root's name, or below a framework class's) or ``attribute:NAME`` (the root's)."""
    max_trace_spans: int = MAX_TRACE_SPANS
    """A trace with more spans is left out: mapping holds one trace's spans in memory at once."""
    max_trace_bytes: int = MAX_TRACE_MIB * 2**20
    """A trace whose spans (as kept: the attributes a case can be built from) take more is left out."""
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    """Model name (or ``'*'``) -> prices: the cost of a request whose trace reports none, from its token split."""


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """What the window, the sample and the sessions need of a mapped trace, kept in memory for every one."""

    trace_id: str
    started_at: datetime
    route: str
    service: str
    model_name: str | None
    session_id: str | None

    @classmethod
    def of(cls, trace: MappedTrace) -> "TraceSummary":
        """Routes, services and models repeat across traces: interned, each is held once."""
        return cls(trace_id=trace.trace_id, started_at=trace.started_at, route=sys.intern(trace.route),
                   service=sys.intern(trace.service), model_name=_interned(trace.model_name),
                   session_id=trace.session_id)  # fmt: skip


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
    check_route_from(options.route_from)
    report = TraceImportReport(
        format=options.format,
        files=[str(path) for path in files],
        window={"since": _iso(options.since), "until": _iso(options.until)},
        sample=_describe(options.sample),
        seed=options.seed if options.sample else None,
        stratified_by=options.stratify_by if options.sample else None,
        pii_masked=options.mask_pii,
    )
    duplicates = LeftOut(reason="span read twice (same trace and span id): the later copy is ignored")
    with span_spill(lambda trace_id, span_id: duplicates.add(f"{trace_id}/{span_id}")) as spill:
        _read(files, READERS[options.format], spill, report, options.route_from)
        _note(report, duplicates)
        summaries = _map(spill, options, report)
        chosen = _sample(_in_window(summaries, options, report), options, report)
        history = _conversations(summaries, chosen, spill, report)
        masker = Masker(pii=options.mask_pii)
        rows = [lab_row(_counted(trace, report, options.format), history.get(trace.trace_id, []), options.format,
                        masker, options.prices)
                for trace in spill.mapped([trace.trace_id for trace in chosen])]  # fmt: skip
    rows = unique_keys(rows)
    report.cases = len(rows)
    report.cases_with_error = sum(1 for row in rows if row.error)
    services = sorted({row.model_key for row in rows})
    name = masker.text(options.name or (f"traces-{Path(files[0]).stem}" if files else "traces")) or "traces"
    report = masked_report(report, masker)
    lab = TestLab(
        name=name,
        description=f"{len(rows)} production requests imported from {len(files)} {options.format} trace file(s).",
        models=[
            ModelHost(key=service, type=TRACES_HOST_TYPE, name=service, prices=dict(options.prices))
            for service in services
        ],
        rows=rows,
    )
    return lab, report


def _read(files: Sequence[Path], reader: Reader, spill: SpanSpill, report: TraceImportReport, route_from: str) -> None:
    """Every span into the spill, with only the attributes a case can be built from; GenAI log records beside."""
    for path in files:
        for span in reader(path):
            if isinstance(span, LogEvent):
                spill.add_event(span)
                continue
            report.spans += 1
            span.attributes = mapped_attributes(span, route_from)
            spill.add(span)
    report.log_events = spill.log_events
    report.traces = spill.trace_count()
    report.spans_by_kind = dict(sorted(spill.kinds.items()))


@dataclass
class _Unmappable:
    """Why traces read did not map to a case, in the order the report lists them."""

    too_many: LeftOut
    too_large: LeftOut
    no_root: LeftOut = field(default_factory=lambda: LeftOut(reason=NO_ROOT))
    several: LeftOut = field(default_factory=lambda: LeftOut(reason="more than one root span"))
    no_question: LeftOut = field(default_factory=lambda: LeftOut(reason=NO_QUESTION))


def _map(spill: SpanSpill, options: ImportOptions, report: TraceImportReport) -> list[TraceSummary]:
    """Each trace mapped as it comes out of the spill (a trace over the limits is left out unread) and kept
    there; what stays in memory is its summary, the mapped traces in start order."""
    reasons = _Unmappable(
        too_many=LeftOut(reason=f"more than {options.max_trace_spans} spans (--max-trace-spans)"),
        too_large=LeftOut(reason=f"more than {options.max_trace_bytes / 2**20:g} MiB of spans (--max-trace-mb)"),
    )
    unmapped: Counter[tuple[str, str]] = Counter()
    summaries: list[TraceSummary] = []
    for spilled in spill.traces():
        if spilled.spans > options.max_trace_spans:
            reasons.too_many.add(spilled.trace_id)
        elif spilled.size > options.max_trace_bytes:
            reasons.too_large.add(spilled.trace_id)
        elif trace := _mapped(spilled.trace_id, spill.spans_of(spilled.trace_id), reasons, report, options.route_from):
            unmapped.update(trace.unmapped)
            spill.keep(trace)
            summaries.append(TraceSummary.of(trace))
    for reason in vars(reasons).values():
        _note(report, reason)
    report.unmapped_spans = [
        SpanCount(kind=kind, name=name, count=count) for (kind, name), count in sorted(unmapped.items())
    ]
    return sorted(summaries, key=lambda trace: (trace.started_at, trace.trace_id))


def _mapped(
    trace_id: str, spans: list[Span], reasons: _Unmappable, report: TraceImportReport, route_from: str
) -> MappedTrace | None:
    ids = {span.span_id for span in spans}
    report.orphan_spans += sum(1 for span in spans if span.parent_id and span.parent_id not in ids)
    roots = [span for span in spans if not span.parent_id]
    if not roots:
        reasons.no_root.add(trace_id)
        return None
    if len(roots) > 1:
        reasons.several.add(trace_id)
        return None
    trace = map_trace(roots[0], spans, route_from)
    if trace.question is None:
        reasons.no_question.add(trace_id)
        return None
    return trace


def _in_window(traces: list[TraceSummary], options: ImportOptions, report: TraceImportReport) -> list[TraceSummary]:
    outside = LeftOut(reason="started outside --since/--until")
    in_range = []
    for trace in traces:
        if in_window(trace.started_at, options.since, options.until):
            in_range.append(trace)
        else:
            outside.add(trace.trace_id)
    _note(report, outside)
    return in_range


def _conversations(
    traces: list[TraceSummary], chosen: list[TraceSummary], spill: SpanSpill, report: TraceImportReport
) -> dict[str, list[ConversationTurn]]:
    """Per chosen trace id, the turns of its session before it, from every trace mapped (``traces`` is in start
    order); only the sessions of chosen traces are read back from the spill, up to the last chosen request."""
    sessions: dict[tuple[str, str], list[str]] = defaultdict(list)
    for trace in traces:
        if trace.session_id:
            sessions[(trace.service, trace.session_id)].append(trace.trace_id)
    report.sessions = sum(1 for requests in sessions.values() if len(requests) > 1)
    wanted = {trace.trace_id for trace in chosen}
    history: dict[str, list[ConversationTurn]] = {}
    for requests in sessions.values():
        last = max((index for index, trace_id in enumerate(requests) if trace_id in wanted), default=0)
        if last:  # the first request of a session has no turns before it
            history |= _turns_before(spill.mapped(requests[: last + 1]), wanted)
    return history


def _turns_before(requests: Iterable[MappedTrace], wanted: set[str]) -> dict[str, list[ConversationTurn]]:
    history: dict[str, list[ConversationTurn]] = {}
    turns: list[ConversationTurn] = []
    for trace in requests:
        if trace.trace_id in wanted:
            history[trace.trace_id] = list(turns)
        turns.append(ConversationTurn(role="user", content=trace.question or ""))
        if trace.answer is not None:
            passages = [chunk.text for chunk in trace.documents]
            turns.append(ConversationTurn(role="assistant", content=trace.answer, context=passages))
    return history


def _sample(traces: list[TraceSummary], options: ImportOptions, report: TraceImportReport) -> list[TraceSummary]:
    if options.sample is None:
        return traces
    stratum: Callable[[TraceSummary], str] = {
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


def _counted(trace: MappedTrace, report: TraceImportReport, format: str) -> MappedTrace:
    """``trace``, its conventions counted in the report (a case is counted under each its spans were read with;
    ``none`` when no span carried a convention's attributes). Only OTLP JSON carries several: an OpenInference
    or MLflow export is read with its own."""
    if format != "otlp-json":
        trace.conventions = (format,)
    for convention in trace.conventions or ("none",):
        report.conventions[convention] = report.conventions.get(convention, 0) + 1
    return trace


def _note(report: TraceImportReport, left_out: LeftOut) -> None:
    if left_out.count:
        report.left_out.append(left_out)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _describe(size: SampleSize | None) -> str | None:
    if size is None:
        return None
    return str(size.count) if size.count is not None else f"{size.fraction:g}"


def _interned(text: str | None) -> str | None:
    return sys.intern(text) if text is not None else None
