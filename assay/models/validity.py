"""What ``assay evaluators validate`` found: how well each evaluator metric, and each one-line baseline, separates
the answers people labelled acceptable from the rest. Pure data; written as ``validity.json``."""

from typing import Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel

ThresholdOrigin = Literal["default", "user", "calibrated", "none"]


class ThresholdInForce(DomainModel):
    value: float | None = Field(description="The threshold a verdict is taken at (None: the metric has none).")
    source: ThresholdOrigin = Field(
        description="default: the evaluator's declared default; user: a --param or a file the user gave; "
        "calibrated: refitted on a person's labels (MRM calibration); none: no threshold."
    )
    set_by: str = Field(description="Who or what set it, in words.")


class ConfusionFigures(DomainModel):
    """"Passes the threshold" read as "acceptable" (label 1)."""

    threshold: float
    accuracy: float
    precision: float | None = Field(description="None: no row passes the threshold.")
    recall: float | None = Field(description="None: no row is labelled acceptable.")
    f1: float | None
    passed: int = Field(description="Rows that pass the threshold.")


class GroupFigures(DomainModel):
    n: int = Field(description="Scored rows of the group.")
    n_unscored: int
    auc: float | None = Field(description="None: the group's scored rows carry one label only.")
    accuracy: float | None = Field(description="At the threshold in force; None without a threshold or a row.")


class UnscoredRow(DomainModel):
    id: str
    reason: str


class MetricValidity(DomainModel):
    """One evaluator metric (or baseline) against the labels."""

    evaluator: str
    metric: str
    display_name: str
    higher_is_better: bool
    n: int = Field(description="Rows scored (and so counted in every figure).")
    n_unscored: int
    unscored_ids: list[str]
    unscored: list[UnscoredRow] = Field(description="Each unscored row with the reason; never counted as 0.")
    auc: float | None = Field(
        description="ROC-AUC: the chance an acceptable answer scores better than one that is not (None: one label)."
    )
    auc_low: float | None = Field(description="Lower end of the 95% bootstrap interval of the AUC.")
    auc_high: float | None
    threshold: ThresholdInForce
    at_threshold: ConfusionFigures | None
    best_threshold: ConfusionFigures | None = Field(description="The most accurate cut on this data (optimistic).")
    groups: dict[str, GroupFigures] = Field(default_factory=dict)


class ValidityReport(PersistedModel):
    labels_file: str
    labels_sha256: str
    labels_source: str = Field(description="How the file was read: jsonl, csv, a test lab, calibration labels...")
    rows: int
    acceptable: int = Field(description="Rows labelled 1.")
    generated_at: str
    evaluators: dict[str, dict[str, MetricValidity]] = Field(description="evaluator id -> metric key -> figures")
    baselines: dict[str, dict[str, MetricValidity]] = Field(description="baseline id -> its one metric -> figures")
    unavailable: dict[str, str] = Field(
        default_factory=dict, description="Evaluators asked for (or in 'all') that were not scored, with the reason."
    )
    notes: list[str] = Field(default_factory=list, description="What reading the labels left out, and why.")
    bootstrap: dict[str, float | int] = Field(default_factory=dict, description="resamples, seed, confidence")
