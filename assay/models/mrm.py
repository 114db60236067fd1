"""Outputs of the MRM workflow steps (seed 002 "Model Risk Management"). Pure data: every step's result is
persisted as a versioned artifact, so each model here is what a reviewer or auditor reads back."""

from typing import Any, Literal

from pydantic import Field, field_validator

from assay.models.base import DomainModel, PersistedModel
from assay.names import person_name

# Step 1: topic modeling


class Topic(DomainModel):
    id: int
    label: str = Field(description="Short human label, e.g. the top keywords joined.")
    keywords: list[str]
    chunk_refs: list[str] = Field(description="Chunks in this topic, as '<doc_uri>#<chunk index>'.")
    representative: str = Field(default="", description="A representative chunk text (truncated).")


class TopicModel(PersistedModel):
    topics: list[Topic]
    outlier_chunk_refs: list[str] = Field(default_factory=list, description="Chunks no topic took.")
    config: dict[str, Any] = Field(description="The parameters of the kept configuration.")
    silhouette: float | None = Field(description="Silhouette of the kept configuration (None: not computable).")
    grid: list[dict[str, Any]] = Field(
        default_factory=list, description="Every configuration tried with its silhouette and topic count."
    )


# Step 3: test validation


class CaseValidation(DomainModel):
    test_case_key: str
    cosine: float | None = Field(description="Cosine of question + expected answer with the source text.")
    bertscore_f1: float | None = Field(default=None, description="BERTScore F1 of the expected answer vs source.")
    nli_entailment: float | None = Field(default=None, description="Entailment of the answer by the source.")
    outlier: bool = False
    reasons: list[str] = Field(default_factory=list, description="Why it is flagged, in plain words.")


class SuiteValidation(PersistedModel):
    cases: list[CaseValidation]
    nli_status: str = Field(description="'available' or why NLI was not computed (model absent...).")
    bertscore_status: str = "available"
    thresholds: dict[str, float] = Field(default_factory=dict, description="Outlier cut-offs used per measure.")


# Step 5: calibration


class ReviewItem(DomainModel):
    """One evaluated case shown to a reviewer: agree or disagree with the metric's pass/fail verdict."""

    item_id: str = Field(description="'<evaluator>/<metric>/<model_key>/<test_case_key>'")
    evaluator_id: str
    metric: str
    model_key: str
    test_case_key: str
    question: str
    expected_output: str
    actual_output: str
    score: float
    metric_passes: bool
    threshold: float | None = Field(default=None, description="The threshold the verdict was taken at.")
    higher_is_better: bool = True
    reads: list[str] = Field(
        default_factory=list, description="What the metric reads of a case: its evaluator's required inputs."
    )
    contexts: list[str] = Field(
        default_factory=list, description="The retrieved passages of the answer, when the metric reads them."
    )


class ReviewLabel(DomainModel):
    item_id: str
    human_passes: bool = Field(description="The reviewer's verdict: does the answer pass?")
    reviewer: str = Field(min_length=1, description="Who labelled it: a person's name (or their approvals file).")

    @field_validator("reviewer")
    @classmethod
    def _visible(cls, value: str) -> str:
        name = person_name(value)
        if not name:
            raise ValueError("blank, spaces or invisible characters are not a name")
        return name


class ThresholdAgreement(DomainModel):
    """The metric's verdicts at one threshold compared with the reviewer's labels."""

    threshold: float = Field(description="The threshold the verdicts were taken at.")
    accuracy: float = Field(description="Share of the labelled answers whose verdict equals the reviewer's label.")
    accuracy_low: float = Field(description="Low end of the accuracy's 95% bootstrap interval.")
    accuracy_high: float = Field(description="High end of the accuracy's 95% bootstrap interval.")


class CalibrationValidity(DomainModel):
    """How well one metric agrees with the answers a reviewer labelled in step 5 (``assay.validity.agreement``
    says what a label means). The sample leans towards answers near the threshold, so these figures describe
    that sample, not every answer of the run."""

    n: int = Field(description="Answers the reviewer labelled pass or fail for this metric (skipped ones left out).")
    acceptable: int = Field(description="How many of them the reviewer passed (acceptable answers).")
    auc: float | None = Field(
        description="ROC-AUC of the score against the labels: the chance an acceptable answer scores better than "
        "an unacceptable one. It does not depend on the threshold, so it holds before and after calibration. "
        "None when every label is the same."
    )
    auc_low: float | None = Field(description="Low end of the AUC's 95% bootstrap interval.")
    auc_high: float | None = Field(description="High end of the AUC's 95% bootstrap interval.")
    before: ThresholdAgreement = Field(description="At the threshold in force before calibration (default or user).")
    after: ThresholdAgreement = Field(description="At the threshold in force after calibration.")
    refitted: bool = Field(
        description="Whether the 'after' threshold was fitted on these same labels: then its accuracy is "
        "in-sample, an optimistic figure."
    )
    labelled_by: list[str] = Field(description="Whose labels these are, named as in the approvals file or form.")
    changed: int | None = Field(
        default=None,
        description="Labels that differ from the metric's verdict (the form's proposal). 0: every label confirms "
        "the metric, so the agreement figures are no independent evidence. None: not recorded (older runs).",
    )
    source: str = Field(default="reviewer labels, MRM step 5", description="What the figures were measured on.")


CalibrationOutcome = Literal["calibrated", "confirmed", "unsupported", "undecided", "not_meaningful"]
NOT_MEANINGFUL: CalibrationOutcome = "not_meaningful"
"""The reviewer marked the metric not meaningful for this system: it keeps its default and leaves the verdict."""


class MetricCalibration(DomainModel):
    evaluator_id: str
    metric: str
    higher_is_better: bool
    default_threshold: float | None
    calibrated_threshold: float | None
    interval: tuple[float, float] | None = Field(default=None, description="95% bootstrap interval of the threshold.")
    labels: int
    labels_changed: int | None = Field(
        default=None, description="How many of the labels differ from the metric's verdict (None: not recorded)."
    )
    agreement_before: float | None
    agreement_after: float | None
    stable: bool = Field(description="Whether the threshold's interval is narrow enough to stop resampling.")
    method: str = ""
    validity: CalibrationValidity | None = Field(
        default=None, description="Agreement with the reviewer's labels before and after; None without labels."
    )
    outcome: CalibrationOutcome = Field(
        default="undecided",
        description="calibrated: the labels decide a new threshold; confirmed: every label agrees with the metric "
        "(default kept); unsupported: the scores do not separate the labels (AUC interval includes 0.5; default "
        "kept); undecided: too few labels, or one class only; not_meaningful: the reviewer marked the metric not "
        "meaningful for this system (default kept, left out of the verdict).",
    )
    auc: float | None = Field(default=None, description="ROC AUC of the scores against the labels.")
    auc_interval: tuple[float, float] | None = Field(default=None, description="95% bootstrap interval of the AUC.")


# Version 2 added each metric's ``validity``; version 1 documents still read, without it.
CALIBRATION_SCHEMA_VERSION = 2


class Calibration(PersistedModel):
    schema_version: int = CALIBRATION_SCHEMA_VERSION
    metrics: list[MetricCalibration]
    rounds: int = 1
    decided_by: Literal["person", "no reviewer"] = Field(
        default="no reviewer", description="Thresholds are refitted only on a person's labels; never a policy's."
    )
    reviewers: list[str] = Field(default_factory=list, description="Who labelled the sample.")
    human_passed_failures: list[str] = Field(
        default_factory=list, description="Row keys '<model>:<case>' failed by a metric but passed by the reviewer."
    )

    def threshold(self, evaluator_id: str, metric: str) -> float | None:
        for item in self.metrics:
            if (item.evaluator_id, item.metric) == (evaluator_id, metric):
                return item.calibrated_threshold if item.calibrated_threshold is not None else item.default_threshold
        return None


# Step 6: failure clustering


class FailureCluster(DomainModel):
    id: int
    size: int
    row_keys: list[str] = Field(description="'<model_key>:<test_case_key>' of the failed cases in the cluster.")
    keywords: list[str] = Field(default_factory=list)
    example_questions: list[str] = Field(default_factory=list)
    mean_scores: dict[str, float] = Field(default_factory=dict, description="'<evaluator>/<metric>' -> mean.")
    weakness: str = Field(default="", description="Name given by the reviewer (or policy).")


class FailureClusters(PersistedModel):
    clusters: list[FailureCluster]
    failures: int
    message: str = Field(default="", description="E.g. why no clustering was done (too few failures).")


# Step 7: weakness detection


class GroupStat(DomainModel):
    mean: float | None
    cases: int
    pass_rate: float | None = None


class MetricWeaknesses(DomainModel):
    evaluator_id: str
    metric: str
    by_topic: dict[str, GroupStat]
    by_question_type: dict[str, GroupStat]
    grid: dict[str, dict[str, GroupStat]] = Field(description="topic -> question type -> stat")
    weakest: list[str] = Field(default_factory=list, description="Groups clearly below the overall mean.")


class WeaknessReport(PersistedModel):
    metrics: list[MetricWeaknesses]


# Steps 8-9: robustness


class FlipCount(DomainModel):
    cases: int
    flips: int
    pass_to_fail: int
    fail_to_pass: int


class RobustnessReport(PersistedModel):
    kind: Literal["input_variations", "adversarial"]
    evaluator_id: str
    metric: str
    by_perturbator: dict[str, FlipCount]
    by_topic: dict[str, FlipCount] = Field(default_factory=dict)
    by_generator: dict[str, FlipCount] = Field(default_factory=dict)
    flipped_row_keys: list[str] = Field(default_factory=list)


# Decisions and the workflow record


class ReviewRecord(DomainModel):
    """How a person answered a step's review forms in the Prefect UI: what they were shown and what they did."""

    how: Literal["accepted the proposals", "reviewed item by item"] = Field(
        description="'accepted the proposals': the bulk choice took every shown proposal as it stood (on the "
        "last form); 'reviewed item by item': the person's choices in the fields were taken."
    )
    forms: int = Field(description="Forms answered (more than one only when the person asked for more).")
    shown: int = Field(description="Items the forms showed.")
    offered: int = Field(description="Items the step had; those not shown took the proposal (or no label).")
    changed: list[str] = Field(
        default_factory=list, description="Ids of shown items whose answer differs from the proposal."
    )
    skipped: list[str] = Field(default_factory=list, description="Calibration answers the person skipped.")


class Decision(DomainModel):
    """One review decision of one run, with who took it, how, and when."""

    step: str
    decided_by: Literal["person", "policy"]
    decision: dict[str, Any]
    note: str = ""
    reviewer: str = Field(default="", description="The person's name as they gave it in the form, if any.")
    source: Literal["prefect-ui", "approvals-file", "policy", "unknown"] = Field(
        default="unknown", description="Where the decision came from."
    )
    run_id: str = Field(default="", description="The run the decision belongs to; another run never reuses it.")
    decided_at: str = Field(default="", description="When it was taken (UTC, ISO 8601).")
    taken_on: str = Field(
        default="", description="SHA-256 of what the step offered (the ids, keys or items shown to decide on)."
    )
    review: ReviewRecord | None = Field(
        default=None, description="For a decision taken in the Prefect UI: what the forms showed and what changed."
    )
    in_words: list[str] = Field(
        default_factory=list,
        description="What was decided, item by item, named as the reviewer saw it (topic 17 \"disputes\" "
        "excluded), for logs and the report; empty in records made before it existed.",
    )


class WorkflowSummary(PersistedModel):
    run_id: str
    export: str = Field(default="", description="The folder the run's files were exported to.")
    steps: dict[str, dict[str, Any]] = Field(description="step -> {status, wall_s, artifact names, counts...}")
    decisions: list[Decision] = Field(default_factory=list)
