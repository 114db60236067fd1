"""Tasks of the evaluate flow. Each persists its result and is cached on (source, inputs) so a rerun of
the same run id resumes: finished steps come from the cache, the lab build from its checkpoints."""

from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import INPUTS, TASK_SOURCE

from artifacts.publish import publish_evaluation
from assay.config import load_settings
from assay.embeddings import shared_engine
from assay.labs import build_test_lab
from assay.models import ModelHost, TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.storage.artifacts import ArtifactStore
from assay.storage.factory import open_object_store
from evaluators import Services, run_evaluator
from evaluators.registry import build_evaluator
from evaluators.selection import select_evaluators
from tasks.timing import library_time

RESUMABLE = TASK_SOURCE + INPUTS


def _embedder():  # type: ignore[no-untyped-def]
    settings = load_settings()
    return shared_engine(settings.embedding_model, settings.cache_path.resolve())


@task(name="build-test-lab", persist_result=True, cache_policy=RESUMABLE)
def build_lab(suite: TestSuite, hosts: list[ModelHost], run_id: str) -> TestLab:
    store = open_object_store(load_settings())
    with library_time():
        return build_test_lab(suite, hosts, run_id=run_id, store=store, embedder=_embedder)


@task(name="run-evaluator", persist_result=True, cache_policy=RESUMABLE)
def evaluate(lab: TestLab, evaluator_id: str, parameters: dict[str, Any], run_id: str) -> EvaluationResult:
    evaluator = build_evaluator(evaluator_id, Services(embedder_factory=_embedder), **parameters)
    with library_time():
        return run_evaluator(evaluator, lab)


@task(name="select-evaluators")
def select(lab: TestLab, requested: list[str]) -> tuple[list[str], dict[str, str]]:
    with library_time():
        return select_evaluators(lab, requested, Services(embedder_factory=_embedder))


@task(name="publish-results")
def publish(
    lab: TestLab,
    results: list[EvaluationResult],
    out_dir: str,
    evaluation_name: str,
    run_id: str,
    skipped: dict[str, str],
) -> dict[str, Any]:
    with library_time():
        return publish_evaluation(
            lab,
            results,
            out_dir=Path(out_dir),
            artifact_store=ArtifactStore(open_object_store(load_settings())),
            evaluation_name=evaluation_name,
            run_id=run_id,
            skipped=skipped,
        )
