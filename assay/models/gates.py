"""Release gates over a finished run: what CI jobs and Prefect automations act on (``gates.json``)."""

from typing import Annotated, Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel
from assay.models.findings import Severity

Comparison = Literal[">=", "<=", ">", "<"]
FailOn = Literal["high", "medium", "any"]
Statistic = Literal["pass_rate", "mean"]
FailedRequestsShare = Annotated[float, Field(ge=0.0, le=1.0)]
"""A re-validation's ``max_failed_requests_share``: checked when the run starts, bounded in its Run form."""
FAIL_ON_SEVERITIES: dict[str, tuple[Severity, ...]] = {
    "high": ("high",),
    "medium": ("high", "medium"),
    "any": ("high", "medium", "low"),
}


class Gate(DomainModel):
    """One parsed ``METRIC OP VALUE`` expression; ``metric`` is resolved against a run or a catalogue later."""

    expression: str
    target: str = Field(description="evaluator_id, evaluator_id.metric_key, or a metric key unique in the run.")
    comparison: Comparison
    value: float


class GateResult(DomainModel):
    """A gate applied to one model of the run."""

    expression: str
    model_key: str | None = Field(description="None when the gate could not be tied to any model.")
    evaluator: str | None = None
    metric: str | None = None
    statistic: Statistic = "pass_rate"
    value: float | None = Field(description="The pass rate (or mean) measured; None when not evaluable.")
    threshold: float = Field(description="The gate's own bound (the number in the expression).")
    comparison: Comparison
    case_threshold: float | None = Field(
        default=None, description="The per-case threshold a case must meet to count as a pass."
    )
    case_threshold_source: str = Field(default="", description="Where the per-case threshold came from.")
    scored: int = 0
    unscored: int = 0
    passing_cases: int = 0
    passed: bool
    reason: str


class SeverityGate(DomainModel):
    """``--fail-on LEVEL``: breached when the run has a problem of that severity or worse."""

    fail_on: FailOn
    counted: dict[str, int] = Field(description="Problems per severity in the run.")
    matching: int
    passed: bool
    reason: str


class FailedRequestsLimit(DomainModel):
    """The largest share of a model's requests that may fail (an error instead of an answer), and who set it."""

    max_share: float = Field(ge=0.0, le=1.0)
    set_by: Literal["parameter", "default"] = Field(
        description="parameter: the run's max_failed_requests_share; default: nobody set one (RunDefaults)."
    )


class ModelRequests(DomainModel):
    """One model's requests in a run: how many were sent and how many failed."""

    model_key: str
    requests: int
    failed: int
    first_error: str | None = Field(default=None, description="The first failed request's error, as recorded.")

    @property
    def share(self) -> float:
        return self.failed / self.requests if self.requests else 0.0


class FailedRequestsGate(DomainModel):
    """Failed requests judged on their own limit: a host that failed a request is a problem of availability, so
    ``--fail-on`` leaves it to this gate (else one failed request in a small sample fails ``high``)."""

    limit: FailedRequestsLimit
    models: list[ModelRequests] = Field(default_factory=list)
    passed: bool
    reason: str

    @property
    def requests(self) -> int:
        return sum(model.requests for model in self.models)

    @property
    def failed(self) -> int:
        return sum(model.failed for model in self.models)


class GateReport(PersistedModel):
    run_id: str | None = None
    source: str = Field(default="", description="Where the run's documents were read from.")
    gates: list[GateResult] = Field(default_factory=list)
    severity: SeverityGate | None = None
    failed_requests: FailedRequestsGate | None = Field(
        default=None, description="Failed requests against their limit; None: counted as --fail-on problems."
    )
    breached: bool
