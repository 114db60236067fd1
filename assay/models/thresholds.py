"""The threshold book of a run: the one threshold in force per (evaluator, metric), with where it came from.

Built once per run (defaults -> user overrides -> calibrated values) and read by everything that turns a
score into pass/fail after calibration: problems, failure clusters, weaknesses, robustness flips, the
guardrail configuration and the report. Pure data."""

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel

ThresholdSource = Literal["default", "user", "calibrated"]
NO_REVIEWER = "no reviewer"

PRIMARY_OVERRIDE = "metric_threshold"
"""The manual's evaluator parameter: the user's threshold for the evaluator's primary metric."""
METRIC_OVERRIDES = "thresholds"
"""The evaluator parameter ``{metric: value}``: the user's threshold for any of its metrics. With the run's
evaluator parameters keyed by evaluator, a run's overrides are one map ``{evaluator: {metric: value}}``."""
DEFAULT_SET_BY = "evaluator default"


def overrides_in(parameters: Mapping[str, Any], primary_metric: str) -> dict[str, float]:
    """metric -> the user's threshold, from one evaluator's parameters: ``thresholds`` names metrics,
    ``metric_threshold`` the primary one (and wins for it, being the narrower of the two)."""
    overrides = {key: float(value) for key, value in (parameters.get(METRIC_OVERRIDES) or {}).items()}
    if parameters.get(PRIMARY_OVERRIDE) is not None:
        overrides[primary_metric] = float(parameters[PRIMARY_OVERRIDE])
    return overrides


def override_origin(parameters: Mapping[str, Any], metric: str, primary_metric: str, evaluator_id: str = "") -> str:
    """Which run parameter set a user's threshold, for the record ("run parameter metric_threshold", or
    "run parameter rouge.metric_threshold" when the evaluator is named)."""
    owner = f"{evaluator_id}." if evaluator_id else ""
    if metric == primary_metric and parameters.get(PRIMARY_OVERRIDE) is not None:
        return f"run parameter {owner}{PRIMARY_OVERRIDE}"
    return f"run parameter {owner}{METRIC_OVERRIDES}.{metric}"


def recorded_override(
    evaluator: Mapping[str, Any], metric: str, is_primary: bool, *, named: bool = False
) -> str | None:
    """Which run parameter overrode ``metric``'s threshold, from the ``evaluator`` block of a results.json
    (its ``parameters`` list and ``metrics_meta``); None when the threshold is the default."""
    parameters = {item.get("name"): item.get("value") for item in evaluator.get("parameters", [])}
    declared = next((item["key"] for item in evaluator.get("metrics_meta", []) if item.get("is_primary")), None)
    primary = declared or (metric if is_primary else "")
    if metric in overrides_in(parameters, primary):
        return override_origin(parameters, metric, primary, evaluator.get("id", "") if named else "")
    return None


def resolve_threshold(
    metric: str, default: float | None, overrides: Mapping[str, float], calibrated: float | None = None
) -> tuple[float | None, ThresholdSource]:
    """The one rule for the threshold in force: calibrated > the user's override > the default."""
    if calibrated is not None:
        return calibrated, "calibrated"
    if metric in overrides:
        return overrides[metric], "user"
    return default, "default"


class ThresholdEntry(DomainModel):
    evaluator_id: str
    metric: str
    threshold: float | None = Field(description="The threshold in force (None: the metric has none).")
    higher_is_better: bool
    source: ThresholdSource
    set_by: str = Field(description="Who or what set it: the evaluator's default, a run parameter, a reviewer.")
    default_threshold: float | None = Field(description="The evaluator's declared default.")
    calibration: str = Field(
        default="", description="For primary metrics: what calibration did ('no reviewer', or why it kept it)."
    )
    outcome: str | None = Field(
        default=None,
        description="For a labelled metric: calibrated, confirmed, unsupported, undecided or not_meaningful "
        "(``MetricCalibration.outcome``); None when nobody labelled it.",
    )
    in_verdict: bool = Field(
        default=True, description="False when the reviewer marked the metric not meaningful for this system."
    )


class ThresholdBook(PersistedModel):
    entries: list[ThresholdEntry]
    reviewer: str = Field(
        default=NO_REVIEWER, description="Who labelled the calibration sample (names and source), or 'no reviewer'."
    )
    labels: int = Field(default=0, description="Calibration labels the reviewer gave (pass or fail).")
    labels_changed: int | None = Field(
        default=None,
        description="How many of those labels differ from the metric's verdict the form proposed; the rest "
        "confirm it. None: not recorded (older runs).",
    )

    @property
    def labelled(self) -> str:
        """'31 labels by Ana (prefect-ui), 7 changed', or 'no reviewer'; all confirmations are said to be so."""
        if self.reviewer == NO_REVIEWER:
            return NO_REVIEWER
        said = f"{self.labels} label{'s' * (self.labels != 1)} by {self.reviewer}"
        if self.labels_changed is None:
            return said
        if self.labels and not self.labels_changed:
            return f"{said}, 0 changed (every label confirms the metric's verdict: no independent evidence)"
        return f"{said}, {self.labels_changed} changed"

    def entry(self, evaluator_id: str, metric: str) -> ThresholdEntry | None:
        for item in self.entries:
            if (item.evaluator_id, item.metric) == (evaluator_id, metric):
                return item
        return None

    def left_out(self) -> set[str]:
        """Evaluators whose primary metric the reviewer took out of the verdict (marked not meaningful)."""
        return {item.evaluator_id for item in self.entries if not item.in_verdict}

    def in_force(self) -> dict[tuple[str, str], float]:
        """(evaluator, metric) -> threshold, for ``EvaluationResult.threshold(metric, thresholds)``."""
        return {(item.evaluator_id, item.metric): item.threshold for item in self.entries if item.threshold is not None}
