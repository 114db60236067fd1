"""The threshold book of a run: the one threshold in force per (evaluator, metric), with where it came from.

Built once per run (defaults -> user overrides -> calibrated values) and read by everything that turns a
score into pass/fail after calibration: problems, failure clusters, weaknesses, robustness flips, the
guardrail configuration and the report. Pure data."""

from typing import Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel

ThresholdSource = Literal["default", "user", "calibrated"]
NO_REVIEWER = "no reviewer"


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

    def in_force(self) -> dict[tuple[str, str], float]:
        """(evaluator, metric) -> threshold, for ``EvaluationResult.threshold(metric, thresholds)``."""
        return {(item.evaluator_id, item.metric): item.threshold for item in self.entries if item.threshold is not None}
