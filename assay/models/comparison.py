"""What changed between a baseline run and a current run (``assay compare``, the scheduled re-validation)."""

from typing import Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel
from assay.models.gates import GateReport

COMPARISON_SCHEMA_VERSION = 2
"""2: ``compared`` (what was compared, what was left out and why) and each delta's matched/compared cases."""

Change = Literal["better", "worse", "no significant change", "not comparable"]
CaseChangeKind = Literal["newly fails", "newly passes", "newly unscored", "newly scored"]
LeftOutReason = Literal[
    "model only in one run",
    "evaluator only in one run",
    "metric only in one run",
    "no per-case results",
    "no case in common",
    "all unscored",
]


class RunReference(DomainModel):
    run_id: str | None
    source: str
    kind: str = Field(description="evaluation, or mrm (its automated-evaluation part is compared)")


class MetricDelta(DomainModel):
    """One metric of one model in both runs; means are over scored cases only (unscored is never 0)."""

    model_key: str
    evaluator: str
    metric: str
    is_primary: bool
    higher_is_better: bool
    baseline_mean: float | None
    current_mean: float | None
    delta: float | None = Field(description="current - baseline; paired: the mean paired difference.")
    ci_low: float | None = Field(description="Bootstrap 95% interval of the delta; None with fewer than 2 cases.")
    ci_high: float | None
    pairing: Literal["paired", "unpaired"] | None
    paired_cases: int = 0
    matched_cases: int = Field(default=0, description="Test case keys this model and evaluator have in both runs.")
    compared_cases: int = Field(
        default=0, description="Of the matched cases, those this metric scored in both runs (compared case by case)."
    )
    baseline_scored: int
    current_scored: int
    baseline_unscored: int
    current_unscored: int
    baseline_pass_rate: float | None = Field(description="Share of scored cases passing the run's own threshold.")
    current_pass_rate: float | None
    baseline_threshold: float | None
    current_threshold: float | None
    threshold_source: str = Field(default="", description="Where the current run's threshold came from.")
    change: Change


class CaseChange(DomainModel):
    """A case whose verdict on an evaluator's primary metric changed (judged by each run's own threshold)."""

    model_key: str
    evaluator: str
    metric: str
    test_case_key: str
    question: str = ""
    change: CaseChangeKind
    baseline_value: float | None
    current_value: float | None
    reason: str = Field(default="", description="The unscored reason, for cases that became (un)scored.")


class ProblemChange(DomainModel):
    key: str = Field(description="evaluator | problem type | metric | model [| test case]: stable across runs.")
    status: Literal["new", "resolved"]
    severity: str
    problem_type: str
    description: str


class Unmatched(DomainModel):
    models_only_in_baseline: list[str] = Field(default_factory=list)
    models_only_in_current: list[str] = Field(default_factory=list)
    evaluators_only_in_baseline: list[str] = Field(default_factory=list)
    evaluators_only_in_current: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="Anything else that could not be compared, and why.")


class LeftOut(DomainModel):
    """Something one run has that was not compared case by case, and why."""

    item: str = Field(description="'model KEY', 'evaluator ID', 'EVALUATOR.METRIC' or 'MODEL / EVALUATOR.METRIC'.")
    reason: LeftOutReason
    detail: str = Field(default="", description="Which run has it, or the counts behind the reason.")


class Coverage(DomainModel):
    """What a comparison actually compared: a comparison of nothing must not read as "0 worse"."""

    metrics_compared: int = Field(
        description="(model, evaluator, metric) triples with at least one test case scored in both runs, or, for "
        "two production samples, at least 2 cases scored in each."
    )
    metrics_in_both: int = Field(description="(model, evaluator, metric) triples both runs have, compared or not.")
    cases_matched: int = Field(
        description="Distinct test case keys found in both runs for a model and evaluator both runs have."
    )
    cases_compared: int = Field(description="Distinct test case keys scored in both runs on some compared metric.")
    samples_compared: int = Field(
        default=0,
        description="Triples of two production samples (models read from traces) compared as independent samples: "
        "different requests, so no case is in both runs; each run scored at least 2 cases and the delta's "
        "interval is an unpaired bootstrap. Counted in metrics_compared.",
    )
    left_out: list[LeftOut] = Field(default_factory=list, description="What was not compared case by case, and why.")
    nothing_comparable_reason: str = Field(
        default="", description="Why no case and metric could be compared; empty when something was."
    )

    @property
    def nothing_comparable(self) -> bool:
        return self.metrics_compared == 0


class Comparison(PersistedModel):
    schema_version: int = COMPARISON_SCHEMA_VERSION
    baseline: RunReference
    current: RunReference
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    deltas: list[MetricDelta] = Field(default_factory=list)
    case_changes: list[CaseChange] = Field(default_factory=list)
    problem_changes: list[ProblemChange] = Field(default_factory=list)
    unmatched: Unmatched = Field(default_factory=Unmatched)
    gates: GateReport | None = Field(default=None, description="The current run's gates, when any were given.")
    compared: Coverage | None = Field(
        default=None,
        description="What was compared, what was left out and why; None in documents written before schema 2.",
    )

    @property
    def nothing_comparable(self) -> bool:
        """No case and metric were compared: "no regression" would be vacuous (unknown for old documents)."""
        return self.compared is not None and self.compared.nothing_comparable

    @property
    def significantly_worse(self) -> list[MetricDelta]:
        return [delta for delta in self.deltas if delta.change == "worse"]

    @property
    def newly_failing(self) -> list[CaseChange]:
        return [change for change in self.case_changes if change.change == "newly fails"]

    @property
    def regressed(self) -> bool:
        """Some metric significantly worse (CI entirely on the bad side of 0), or a case newly failing."""
        return bool(self.significantly_worse or self.newly_failing)
