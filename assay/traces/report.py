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
