"""The MRM workflow's step parameters (seed 002, "Step parameters" of each workflow step), typed so the
Prefect UI's Run form, the CLI and an approvals-free scheduled run all set the same fields with the same
defaults. Pure data: the steps read them; the run fingerprint hashes them."""

from typing import Literal

from pydantic import Field, PrivateAttr, model_validator
from pydantic.json_schema import SkipJsonSchema

from assay.models.base import DomainModel
from assay.models.corpus import DEFAULT_CHUNK_WORDS
from assay.models.evaluation import DEFAULT_EVALUATORS
from assay.models.plugins import PerturbatorId

Intensity = Literal["low", "medium", "high"]

# The manual's tutorial choice plus keyboard typos: every extra perturbator multiplies step 8's host calls.
DEFAULT_VARIATIONS = ("comma", "word_swap", "random_keyboard_typos")


class TopicModelingParameters(DomainModel):
    """Step 1. Left empty, a small grid scaled to the corpus is searched and the best silhouette kept; a
    value set here is used in every grid configuration."""

    top_n_words: int | None = Field(default=None, ge=1, le=50, description="Top words extracted per topic.")
    min_topic_size: int | None = Field(default=None, ge=2, description="Minimum chunks per topic.")
    umap_n_neighbors: int | None = Field(default=None, ge=2, description="UMAP neighbours.")
    umap_n_components: int | None = Field(default=None, ge=2, le=50, description="UMAP components.")
    umap_min_dist: float | None = Field(default=None, ge=0.0, le=1.0, description="UMAP minimal distance.")
    hdbscan_min_cluster_size: int | None = Field(default=None, ge=2, description="HDBSCAN minimum cluster size.")
    hdbscan_min_samples: int | None = Field(default=None, ge=1, description="HDBSCAN minimum samples.")
    hdbscan_cluster_selection_epsilon: float | None = Field(
        default=None, ge=0.0, description="HDBSCAN cluster selection epsilon."
    )
    chunk_words: int = Field(default=DEFAULT_CHUNK_WORDS, ge=20, le=2000, description="Words per corpus chunk.")

    def overrides(self) -> dict[str, int | float]:
        """The manual's parameters the user set (the grid search varies the rest)."""
        return {key: value for key, value in self.model_dump(exclude={"chunk_words"}).items() if value is not None}


CASES_PER_TOPIC = 3
"""Test cases per topic and generator: step 2's parameter and ``generate_suite``'s default."""


class TestGenerationParameters(DomainModel):
    """Step 2."""

    per_topic: int = Field(default=CASES_PER_TOPIC, ge=1, le=50, description="Test cases per topic and generator.")
    generators: list[str] = Field(
        default_factory=list, description="Question generators to use; empty: every offline generator."
    )


OUTLIER_Z = 3.0
"""Robust z-score beyond which a generated case is an outlier: step 3's parameter and ``validate_suite``'s."""


class TestValidationParameters(DomainModel):
    """Step 3."""

    nli_model: str | None = Field(default=None, description="Folder of an NLI cross-encoder; empty: no NLI score.")
    outlier_z: float = Field(default=OUTLIER_Z, gt=0.0, description="Robust z-score beyond which a case is an outlier.")


REVIEW_SAMPLE_PER_METRIC = 20
"""Answers sampled per primary metric for calibration: the step's parameter and the library's default."""
REVIEW_PAGE_SIZE = 25
"""Items per review form: the step's parameter and the review forms' default."""
CALIBRATION_ANSWERS_PER_FORM = 8
"""Answers per calibration form: the step's parameter and the calibration form's default."""
MIN_LABELS = 6
"""Labels a primary metric needs before its threshold is refitted: ``fit_thresholds``' default, and what the
calibration form tells the reviewer."""


class CalibrationParameters(DomainModel):
    """Step 5."""

    per_metric: int = Field(
        default=REVIEW_SAMPLE_PER_METRIC,
        ge=2,
        le=100,
        description="Answers sampled per primary metric, stratified around its threshold.",
    )
    page_size: SkipJsonSchema[int | None] = Field(
        default=None,
        ge=1,
        le=50,
        exclude=True,
        description="Deprecated: the old name of ``review.page_size``, still read (and moved there) with a note.",
    )
    answers_per_form: int = Field(
        default=CALIBRATION_ANSWERS_PER_FORM,
        ge=2,
        le=50,
        description="Answers per calibration form, all of one metric (nearest its threshold first): at least the "
        f"label floor of {MIN_LABELS} lets one form calibrate a metric.",
    )


class ReviewParameters(DomainModel):
    """Every reviewed step (1 topics, 3 cases, 5 calibration, 6 cluster names): how its forms page."""

    page_size: int = Field(
        default=REVIEW_PAGE_SIZE,
        ge=1,
        le=50,
        description="Items per review form, the most informative first; the reviewer asks for more instead of "
        "paging through everything.",
    )


OLD_PAGE_SIZE_NOTE = (
    "calibration.page_size is deprecated (it sets the forms of every reviewed step): it was read as "
    "review.page_size = {value}; write review.page_size instead"
)


class RobustnessParameters(DomainModel):
    """Steps 8 and 9."""

    variation_perturbators: list[PerturbatorId] = Field(
        default_factory=lambda: list(DEFAULT_VARIATIONS), description="Perturbators of step 8 (input variations)."
    )
    adversarial_perturbators: list[PerturbatorId] = Field(
        default_factory=list, description="Perturbators of step 9; empty: every adversarial perturbator."
    )
    intensities: list[Intensity] = Field(default_factory=lambda: ["medium"], description="Perturbation intensities.")


class MrmParameters(DomainModel):
    """Every step parameter of one MRM run, with the seed 002 defaults."""

    topic_modeling: TopicModelingParameters = Field(default_factory=TopicModelingParameters)
    test_generation: TestGenerationParameters = Field(default_factory=TestGenerationParameters)
    test_validation: TestValidationParameters = Field(default_factory=TestValidationParameters)
    calibration: CalibrationParameters = Field(default_factory=CalibrationParameters)
    robustness: RobustnessParameters = Field(default_factory=RobustnessParameters)
    review: ReviewParameters = Field(default_factory=ReviewParameters)

    @model_validator(mode="after")
    def _old_page_size(self) -> "MrmParameters":
        """``calibration.page_size`` (before ``review`` existed) is moved to ``review.page_size``, unless that
        is given too (then it wins); either way the old name is dropped and a note says so."""
        old = self.calibration.page_size
        if old is not None:  # each assignment validates the model again: the old field is cleared first
            self.calibration = self.calibration.model_copy(update={"page_size": None})
            if "page_size" not in self.review.model_fields_set:
                self.review = ReviewParameters(page_size=old)
            self._notes.append(OLD_PAGE_SIZE_NOTE.format(value=self.review.page_size))
        return self

    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def deprecation_notes(self) -> list[str]:
        """What the given parameters used under an old name (shown to the user and in the run's log)."""
        return list(self._notes)


class RunDefaults(DomainModel):
    """What a run starts from when it names nothing else, whichever way it starts: the CLI's options, the
    flows' parameters and the deployments' Run forms (``python -m assay.deployments.sync``) read these."""

    hosts: tuple[str, ...] = Field(
        default=("sample-rag",), description="The packaged sample RAG over the sample corpus."
    )
    evaluators: tuple[str, ...] = Field(
        default=DEFAULT_EVALUATORS, description="Offline, fast, and meaningful on any suite."
    )
    mrm_name: str = Field(default="mrm", description="The MRM workflow's artifacts' name in the store.")
    revalidation_name: str = Field(
        default="revalidation", description="A re-validation's name: its evaluation and its baseline's."
    )
    production_evaluators: tuple[str, ...] = Field(
        default=("groundedness", "answer_relevancy_sentence_similarity", "looping_detection", "pii_leakage",
                 "latency", "token_count"),
        description="What a production re-validation scores requests by: offline, and meaningful without an "
        "expected answer (production traces have none).",
    )  # fmt: skip
    production_sample: str = Field(
        default="200", description="How many traces a production re-validation evaluates (a count or a fraction)."
    )
    production_lookback_days: float = Field(
        default=7.0, description="A production re-validation reads the requests of the last N days."
    )
    seed: int = Field(default=0, description="The seed of every random choice of an MRM run.")
    max_failed_requests_share: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="A re-validation fails when more than this share of a model's requests failed (an error "
        "instead of an answer): one failed request in 200 passes, 11 fail.",
    )


RUN_DEFAULTS = RunDefaults()
