"""What a trace import read, used, left out and masked: printed by ``assay traces import`` and written beside
the lab, so that nothing a file held is dropped without saying so."""

from pydantic import BaseModel, Field

MAX_EXAMPLES = 10
"""Ids listed per kind of left-out trace (the counts are always complete)."""


class SpanCount(BaseModel):
    kind: str = Field(description="The OpenInference span kind, 'unknown' when a span declares none.")
    name: str
    count: int


class LeftOut(BaseModel):
    """Traces that did not become test cases, for one reason."""

    reason: str
    count: int = 0
    examples: list[str] = Field(default_factory=list, description=f"Up to {MAX_EXAMPLES} trace ids.")

    def add(self, trace_id: str) -> None:
        self.count += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(trace_id)


class Stratum(BaseModel):
    name: str
    traces: int
    sampled: int


class TraceImportReport(BaseModel):
    format: str
    files: list[str]
    spans: int = 0
    traces: int = 0
    cases: int = 0
    cases_with_error: int = Field(default=0, description="Requests whose root span ended in error (kept as cases).")
    sessions: int = Field(default=0, description="Conversations (session.id) with more than one request.")
    spans_by_kind: dict[str, int] = Field(default_factory=dict)
    conventions: dict[str, int] = Field(
        default_factory=dict,
        description="Cases by the trace convention their spans were read with: 'openinference', 'otel-genai' "
        "(gen_ai.* attributes), 'otel-genai-events' (messages as events or log records), 'otel-genai-indexed' "
        "(the older gen_ai.prompt.N.* attributes), 'none'; a case read with two counts under both. Each case "
        "names its own in test_case.generator.",
    )
    log_events: int = Field(default=0, description="GenAI log records read and joined to their spans.")
    unmapped_spans: list[SpanCount] = Field(
        default_factory=list, description="Spans of imported traces that no field of a case came from."
    )
    orphan_spans: int = Field(default=0, description="Spans whose parent is in no file read (kept in their trace).")
    left_out: list[LeftOut] = Field(default_factory=list)
    window: dict[str, str | None] = Field(default_factory=dict)
    sample: str | None = Field(default=None, description="The --sample asked for; None: every trace in the window.")
    seed: int | None = None
    stratified_by: str | None = None
    strata: list[Stratum] = Field(default_factory=list)
    masked: dict[str, int] = Field(default_factory=dict, description="Values masked before the lab was written.")
    pii_masked: bool = True

    @property
    def unmapped_total(self) -> int:
        return sum(item.count for item in self.unmapped_spans)


def report_markdown(report: TraceImportReport) -> str:
    """The import report as a reviewer reads it in Prefect's Artifacts tab."""
    kinds = ", ".join(f"{kind} {count}" for kind, count in report.spans_by_kind.items()) or "none"
    lines = [
        "# Production traces imported",
        "",
        f"- **{report.cases}** requests became test cases ({report.cases_with_error} ended in error; "
        f"{report.sessions} multi-turn sessions).",
        f"- Read {report.spans} spans ({kinds}) in {report.traces} traces from {len(report.files)} "
        f"{report.format} file(s).",
        f"- Window: since {report.window.get('since') or 'the first request'}, until "
        f"{report.window.get('until') or 'the last'}.",
    ]
    if report.conventions:
        read_with = ", ".join(f"{name} {count}" for name, count in sorted(report.conventions.items()))
        lines.append(f"- Conventions read (cases): {read_with}.")
    if report.sample:
        lines.append(f"- Sample: {report.sample} (seed {report.seed}), stratified by {report.stratified_by}.")
    masked = ", ".join(f"{kind} {count}" for kind, count in report.masked.items()) or "nothing found"
    lines.append(f"- Masked before storing: {masked}" + ("" if report.pii_masked else " (personal data kept)") + ".")
    if report.left_out:
        lines += ["", "| left out | traces | e.g. |", "|---|---|---|"]
        lines += [f"| {item.reason} | {item.count} | {', '.join(item.examples[:3])} |" for item in report.left_out]
    if report.unmapped_spans:
        lines += ["", "| span not mapped (kind) | name | count |", "|---|---|---|"]
        lines += [f"| {item.kind} | {item.name} | {item.count} |" for item in report.unmapped_spans[:MAX_EXAMPLES]]
    return "\n".join(lines) + "\n"
