"""What evaluators declare about themselves and what they produce."""

from collections.abc import Mapping
from typing import Any, Literal, overload

import numpy as np
from pydantic import Field

from assay.models.base import DomainModel, PersistedModel
from assay.models.judges import JudgeSummary
from assay.models.plugins import PluginOrigin
from assay.models.thresholds import overrides_in, resolve_threshold

DEFAULT_EVALUATORS = ("answer_semantic_similarity", "text_matching")
"""Run when a command, flow or deployment names no evaluator: offline, fast, and meaningful on any suite."""

Domain = Literal["generation", "retrieval", "privacy", "fairness", "summarization", "classification"]
Need = Literal["embeddings", "llm", "model_weights"]
Task = Literal["summarization", "translation"]
ModelType = Literal["llm", "rag"]
CaseInput = Literal[
    "question",
    "expected_output",
    "actual_output",
    "retrieved_context",
    "output_condition",
    "expected_retrieved_doc_uris",
    "duration",
    "cost",
    "tokens",
    "assertions",
    "conversation",
    "tool_calls",
]


@overload
def on_good_side(value: float, threshold: float, higher_is_better: bool) -> bool: ...
@overload
def on_good_side(value: np.ndarray, threshold: float | np.ndarray, higher_is_better: bool) -> np.ndarray: ...
def on_good_side(value: Any, threshold: Any, higher_is_better: bool) -> Any:
    """The one pass rule (inclusive), also for metrics read back from results.json as plain data, and
    elementwise for arrays of scores (calibration grids, validity figures)."""
    return value >= threshold if higher_is_better else value <= threshold


def straddles(low: float, high: float, threshold: float, higher_is_better: bool = True) -> bool:
    """Whether a score known only to lie in ``[low, high]`` may fall on either side of ``threshold`` (the one
    rule decides each end)."""
    return bool(on_good_side(low, threshold, higher_is_better) != on_good_side(high, threshold, higher_is_better))


class MetricMeta(DomainModel):
    key: str
    display_name: str
    description: str
    higher_is_better: bool = True
    threshold: float | None = None
    range: tuple[float, float] = (0.0, 1.0)
    is_primary: bool = False
    aggregate_name: str | None = Field(
        default=None, description="Name of the run-level aggregate where a reference defines one (seeds 001/003)."
    )

    def passes(self, value: float, threshold: float | None = None) -> bool:
        """Whether ``value`` is on the good side of the threshold (inclusive)."""
        limit = self.threshold if threshold is None else threshold
        if limit is None:
            return True
        return on_good_side(value, limit, self.higher_is_better)


class ParameterMeta(DomainModel):
    name: str
    description: str
    type: str
    default: Any = None


class EvaluatorSpec(DomainModel):
    """Everything about an evaluator that is data: declared once, written into every results file."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    display_name: str
    description: str
    domain: Domain
    compliance: list[str] = Field(default_factory=list)
    model_types: list[ModelType] = Field(default_factory=lambda: ["llm", "rag"])
    required_inputs: list[CaseInput]
    needs: list[Need] = Field(default_factory=list)
    tasks: list[Task] = Field(
        default_factory=list,
        description="Tasks a case must declare (in its categories) for this evaluator to apply; empty: any case.",
    )
    metrics: list[MetricMeta]
    parameters: list[ParameterMeta] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    problem_type: str | None = Field(
        default=None, description="Type of the problems this evaluator reports; defaults by domain."
    )

    @property
    def primary_metric(self) -> MetricMeta:
        return next(metric for metric in self.metrics if metric.is_primary)

    def metric(self, key: str) -> MetricMeta:
        for metric in self.metrics:
            if metric.key == key:
                return metric
        raise KeyError(f"evaluator {self.id} has no metric {key!r}")


class CaseScores(DomainModel):
    """One evaluator's verdict on one test-lab row. Empty ``scores`` with a reason means unscored, not zero."""

    test_case_key: str
    model_key: str
    scores: dict[str, float | None] = Field(default_factory=dict)
    unscored_reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class MetricAggregate(DomainModel):
    mean: float | None = Field(description="Mean over scored cases, or the evaluator's corpus-level value.")
    scored: int
    unscored: int
    passed: int = Field(description="Scored cases on the good side of the threshold.")
    corpus_level: bool = Field(default=False, description="True when ``mean`` is computed over all cases at once.")


class EvaluationResult(PersistedModel):
    evaluator: EvaluatorSpec
    parameters: dict[str, Any] = Field(default_factory=dict)
    rows: list[CaseScores]
    aggregates: dict[str, dict[str, MetricAggregate]] = Field(
        default_factory=dict, description="model_key -> metric key -> aggregate"
    )
    model_details: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="model_key -> run-level details, e.g. a confusion matrix"
    )
    judge: JudgeSummary | None = Field(
        default=None, description="The LLM judge, prompt templates and cost account, for judged evaluators."
    )
    origin: PluginOrigin | None = Field(
        default=None,
        description="The package the evaluator's code came from (Assay or another package's entry point), with its "
        "version; None in a result written before origins were recorded.",
    )
    elapsed_s: float = 0.0

    def threshold_overrides(self) -> dict[str, float]:
        """metric -> the threshold the user set for this run (from the recorded parameters)."""
        return overrides_in(self.parameters, self.evaluator.primary_metric.key)

    def threshold(self, metric_key: str, calibrated: Mapping[tuple[str, str], float] | None = None) -> float | None:
        """The threshold in force for a metric of this run (``resolve_threshold``): a calibrated one when
        given, else the user's override, else the metric's default."""
        value, _ = resolve_threshold(
            metric_key,
            self.evaluator.metric(metric_key).threshold,
            self.threshold_overrides(),
            (calibrated or {}).get((self.evaluator.id, metric_key)),
        )
        return value
