"""Tasks of the evaluate flow. The expensive ones persist their result (as JSON, see ``tasks.result_safety``)
and are cached on (source, inputs) so a rerun of the same run id resumes: finished steps come from the
cache, the lab build from its checkpoints. The cheap ones persist nothing."""

from pathlib import Path
from typing import Any

from assay.artifacts.publish import publish_evaluation
from assay.evaluators.registry import build_evaluator
from assay.evaluators.run_services import configured_embedder, run_services
from assay.evaluators.score_checkpoints import run_with_checkpoints
from assay.evaluators.selection import select_evaluators
from assay.evaluators.shards import join_labs, merge_results
from assay.tasks.control_room import step_progress
from assay.tasks.result_safety import resumable
from assay.tasks.timing import library_time
from prefect import task

from assay.config import load_settings
from assay.labs import build_test_lab, shard_size_for
from assay.models import ModelHost, TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.storage.factory import open_artifact_store, open_object_store, open_signer

ANSWERS_SHARE = 0.5
"""Of an evaluation's progress: asking the hosts. On the sample suite answering took 12 s and the 18 default
evaluators 5 s in all; a remote host or a judge moves that either way."""


@resumable("build-test-lab", run_name="ask-hosts-{run_id}")
def build_lab(suite: TestSuite, hosts: list[ModelHost], run_id: str) -> TestLab:
    """Feeds its step's bar (the part the flow gave) after each shard of answers."""
    settings = load_settings()
    store, signer = open_object_store(settings), open_signer(settings)
    with library_time(), step_progress() as progress:
        asked = len(hosts) * suite.case_count
        answered = 0

        def on_shard(host_key: str, rows: int) -> None:
            nonlocal answered
            answered += rows
            progress(answered / asked)

        return build_test_lab(
            suite,
            hosts,
            run_id=run_id,
            store=store,
            signer=signer,
            embedder=configured_embedder,
            shard_size=shard_size_for(suite.case_count),  # about 20 shards: the bar moves every ~5% of answers
            on_shard=on_shard,
        )


@resumable("run-evaluator", run_name="evaluate-{evaluator_id}")
def evaluate(
    lab: TestLab,
    evaluator_id: str,
    parameters: dict[str, Any],
    run_id: str,
    judge: dict[str, Any] | None = None,
    judge_options: dict[str, Any] | None = None,
) -> EvaluationResult:
    evaluator = build_evaluator(evaluator_id, run_services(judge, judge_options), **parameters)
    settings = load_settings()
    with library_time(), step_progress() as progress:
        return run_with_checkpoints(
            evaluator,
            lab,
            store=open_object_store(settings),
            run_id=run_id,
            signer=open_signer(settings),
            progress=progress,
        )


@task(name="join-lab-shards", persist_result=False)
def join(parts: list[TestLab]) -> TestLab:
    with library_time():
        return join_labs(parts)


@task(name="merge-shards", task_run_name="merge-{evaluator_id}", persist_result=False)
def merge(
    lab: TestLab,
    evaluator_id: str,
    parameters: dict[str, Any],
    parts: list[EvaluationResult],
    judge: dict[str, Any] | None = None,
    judge_options: dict[str, Any] | None = None,
) -> EvaluationResult:
    """One evaluator's result over the whole lab from its shards' results (aggregates recomputed)."""
    evaluator = build_evaluator(evaluator_id, run_services(judge, judge_options), **parameters)
    with library_time():
        return merge_results(evaluator, lab, parts)


@task(name="select-evaluators", persist_result=False)
def select(lab: TestLab, requested: list[str], judge: dict[str, Any] | None = None) -> tuple[list[str], dict[str, str]]:
    with library_time():
        return select_evaluators(lab, requested, run_services(judge, None))


@task(name="publish-results", persist_result=False)
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
            artifact_store=open_artifact_store(load_settings()),
            evaluation_name=evaluation_name,
            run_id=run_id,
            skipped=skipped,
        )
