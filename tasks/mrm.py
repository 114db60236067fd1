"""Tasks of the MRM workflow: one library call each, cached on (source, inputs) and persisted, so a rerun
of the same run resumes after the last finished step (results stored as JSON, see ``tasks.result_safety``).
Pure computations are cached on their content alone, so a new run over the same corpus and parameters
reuses them; what asks a host or a language model (generation, perturbation, answers) is keyed by the run.
Large inputs arrive quote()d from the flow."""

from pathlib import Path
from typing import Any

from assay.artifacts.publish import publish_documents
from assay.evaluators.run_services import configured_embedder
from assay.tasks.control_room import step_progress
from assay.tasks.result_safety import resumable
from assay.tasks.timing import library_time
from prefect import task

from assay.config import load_settings
from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.models import Chunk, TestLab, TestSuite
from assay.models.artifacts import Producer
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import (
    Calibration,
    FailureClusters,
    ReviewItem,
    ReviewLabel,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
    WorkflowSummary,
)
from assay.models.steps import Step
from assay.models.thresholds import ThresholdBook
from assay.models.workflow import TestGenerationParameters, TestValidationParameters, TopicModelingParameters
from assay.storage.factory import open_artifact_store

PERTURB_SHARE = 0.1
"""Of a robustness step's bar: perturbing takes seconds (more with a language model); answering and
evaluating the perturbed cases (``WorkflowRun.evaluate``) the rest."""


def _language_model():  # type: ignore[no-untyped-def]
    """The configured judge endpoint as the language model that writes test cases and false context (its
    replies cached with the judge's), or None when no judge is configured: the offline methods then."""
    from assay.judges.client import open_judge
    from assay.judges.language_model import JudgeLanguageModel

    settings = load_settings()
    client = open_judge(settings.judge, settings.cache_path.resolve() / "judge")
    return JudgeLanguageModel(client) if client is not None and client.unavailable_reason() is None else None


@resumable("load-corpus")
def load_chunks(corpus: str | None, chunk_words: int, corpus_fingerprint: str) -> list[Chunk]:
    """``corpus_fingerprint`` (of the documents' content) keys the cache: an edited document is read again."""
    with library_time():
        folder = Path(corpus) if corpus else sample_data_path() / "corpus"
        return chunk_corpus(load_corpus(folder), chunk_words)


@resumable(Step.TOPIC_MODELING)
def topics(chunks: list[Chunk], parameters: TopicModelingParameters, seed: int) -> TopicModel:
    from assay.mrm.topics import grid_for, model_topics

    grid = grid_for(parameters, len(chunks))
    with library_time(), step_progress(Step.TOPIC_MODELING) as progress:
        return model_topics(chunks, configured_embedder(), grid=grid, seed=seed, progress=progress)


@resumable(Step.TEST_GENERATION)
def generate(
    topic_model: TopicModel,
    chunks: list[Chunk],
    excluded: list[int],
    parameters: TestGenerationParameters,
    seed: int,
    run_id: str,
) -> TestSuite:
    from assay.generation import generate_suite

    keep = {topic.id for topic in topic_model.topics} - set(excluded)
    with library_time():
        return generate_suite(
            topic_model,
            chunks,
            generators=parameters.generators or None,
            per_topic=parameters.per_topic,
            topic_ids=keep,
            seed=seed,
            name="MRM generated suite",
            llm=_language_model(),
        )


@resumable(Step.TEST_VALIDATION)
def validate(suite: TestSuite, chunks: list[Chunk], parameters: TestValidationParameters) -> SuiteValidation:
    from assay.mrm.validation import validate_suite

    with library_time(), step_progress(Step.TEST_VALIDATION) as progress:
        return validate_suite(
            suite,
            {chunk.ref: chunk for chunk in chunks},
            configured_embedder(),
            nli_model=parameters.nli_model,
            outlier_z=parameters.outlier_z,
            progress=progress,
        )


@resumable("exclude-cases")
def exclude(suite: TestSuite, keys: list[str]) -> TestSuite:
    from assay.mrm.validation import exclude_cases

    with library_time():
        return exclude_cases(suite, set(keys))


@resumable("sample-for-review")
def sample_review(lab: TestLab, results: list[EvaluationResult], per_metric: int, seed: int) -> list[ReviewItem]:
    from assay.mrm.calibration import sample_for_review

    with library_time():
        return sample_for_review(lab, results, per_metric=per_metric, seed=seed)


@resumable("calibrate")
def calibrate(
    items: list[ReviewItem],
    labels: list[ReviewLabel],
    results: list[EvaluationResult],
    seed: int,
    not_meaningful: list[str] | None = None,
) -> Calibration:
    """Refit on a person's labels; without labels (no reviewer) every threshold keeps its value. Metrics the
    person marked not meaningful keep their default and say so."""
    from assay.mrm.calibration import fit_thresholds

    with library_time():
        return fit_thresholds(items, labels, results, seed=seed, not_meaningful=not_meaningful or ())


@resumable("threshold-book")
def threshold_book(results: list[EvaluationResult], calibration: Calibration, reviewer: str) -> ThresholdBook:
    from assay.thresholds import threshold_book as build

    with library_time():
        return build(results, calibration, reviewer)


@resumable(Step.FAILURE_CLUSTERING)
def clusters(lab: TestLab, results: list[EvaluationResult], thresholds: ThresholdBook, seed: int) -> FailureClusters:
    from assay.mrm.clustering import cluster_failures

    with library_time():
        return cluster_failures(lab, results, configured_embedder(), thresholds=thresholds.in_force(), seed=seed)


@resumable(Step.WEAKNESS_DETECTION)
def weaknesses(lab: TestLab, results: list[EvaluationResult], thresholds: ThresholdBook) -> WeaknessReport:
    from assay.mrm.weaknesses import detect_weaknesses

    with library_time():
        return detect_weaknesses(lab, results, thresholds=thresholds.in_force())


@resumable("perturb", run_name="perturb-{run_id}")
def perturb(suite: TestSuite, perturbators: list[str], intensities: list[str], seed: int, run_id: str) -> TestSuite:
    from assay.mrm.robustness import perturbed_only

    with library_time(), step_progress().part(0.0, PERTURB_SHARE) as progress:
        return perturbed_only(suite, perturbators, intensities, seed, llm=_language_model(), progress=progress)


@resumable("count-flips", run_name="count-flips-{kind}")
def flips(
    kind: str,
    lab: TestLab,
    results: list[EvaluationResult],
    baseline: list[EvaluationResult],
    thresholds: ThresholdBook,
) -> list[RobustnessReport]:
    from assay.mrm.robustness import flip_reports

    with library_time():
        return flip_reports(kind, lab, results, baseline, thresholds.in_force())


@resumable("compliance-artifacts")
def compliance_artifacts(
    summary: WorkflowSummary,
    topic_model: TopicModel,
    validation: SuiteValidation,
    lab: TestLab,
    results: list[EvaluationResult],
    calibration: Calibration,
    thresholds: ThresholdBook,
    clusters: FailureClusters,
    weaknesses: WeaknessReport,
    robustness: list[RobustnessReport],
    perturbed_labs: list[TestLab],
    timing: dict[str, Any],
) -> dict[str, Any]:
    """The corpus patch, system-prompt extension, guardrail configuration, report and summary documents."""
    from assay.artifacts.mrm_documents import mrm_documents

    with library_time():
        return mrm_documents(
            summary,
            topic_model=topic_model,
            validation=validation,
            lab=lab,
            results=results,
            calibration=calibration,
            thresholds=thresholds,
            clusters=clusters,
            weaknesses=weaknesses,
            robustness=robustness,
            perturbed_labs=perturbed_labs,
            timing=timing,
        )


@task(name="publish-step", task_run_name="publish-{step}", persist_result=False)
def publish_step(step: str, documents: dict[str, Any], out_dir: str, prefix: str, run_id: str) -> list[str]:
    with library_time():
        return publish_documents(
            documents,
            out_dir=Path(out_dir),
            artifact_store=open_artifact_store(load_settings()),
            prefix=prefix,
            producer=Producer(flow="mrm-workflow", run_id=run_id),
        )
