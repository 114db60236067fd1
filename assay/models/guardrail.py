"""What the live guardrail service answers for one checked answer (seed 002's real-time "safety shield").

The service and its Python client share these models, so a RAG application reads the same typed result the
service computed. Unscored is its own state (``score`` None with a reason), never a zero, and an evaluator
that cannot run on this machine is reported ``unavailable`` rather than given a made-up score."""

from typing import Any, Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel

Verdict = Literal["allow", "flag", "block"]
Action = Literal["block", "flag"]
EvaluatorStatus = Literal["scored", "unscored", "unavailable"]


class CheckRequest(DomainModel):
    """One live answer to check; ``context`` is the retrieved context the answer was generated from."""

    question: str = Field(description="The user's question.")
    answer: str = Field(description="The RAG system's answer, before it reaches the user.")
    context: list[str] | None = Field(
        default=None, description="Retrieved context chunks; evaluators that need them are unscored without."
    )


class MetricCheck(DomainModel):
    metric: str
    score: float | None = Field(description="None when unscored (see the evaluator's reason), never zero.")
    score_between: tuple[float, float] | None = Field(
        default=None,
        description=(
            "When the check settled pass or fail without the exact score (groundedness reads which claims can "
            "decide before running the embedding model): the range the score lies in; ``score`` is then None."
        ),
    )
    threshold: float
    higher_is_better: bool
    passed: bool | None = Field(description="None when unscored.")
    source: str = Field(description="Where the threshold came from: default, user, calibrated or config.")
    action: Action = Field(description="What failing this metric does to the verdict.")


class EvaluatorCheck(DomainModel):
    evaluator_id: str
    status: EvaluatorStatus
    reason: str | None = Field(default=None, description="Why the evaluator is unscored or unavailable.")
    action: Action = Field(description="What a failed metric of this evaluator does to the verdict.")
    metrics: list[MetricCheck]
    details: dict[str, Any] = Field(
        default_factory=dict, description="What the evaluator found (masked previews only), for reviewers."
    )
    elapsed_ms: float


class ConfigIdentity(DomainModel):
    """Which configuration produced a verdict, so a logged verdict can be traced to its thresholds."""

    sha256: str
    version: str | None = None
    reviewed_by: str | None = None


class CheckResult(PersistedModel):
    verdict: Verdict
    reasons: list[str] = Field(description="One line per failed metric; empty when the verdict is allow.")
    evaluators: list[EvaluatorCheck]
    elapsed_ms: float
    config: ConfigIdentity

    def evaluator(self, evaluator_id: str) -> EvaluatorCheck:
        for item in self.evaluators:
            if item.evaluator_id == evaluator_id:
                return item
        raise KeyError(f"the check has no evaluator {evaluator_id!r}")
