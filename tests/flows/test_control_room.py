"""The Prefect UI as the MRM control room: a flow publishes a step's summary and a long step's progress, and
the artifacts are read back from the server the way the UI reads them (by flow run, by key)."""

import json
from collections.abc import Callable, Iterator
from typing import Any

import assay.tasks.control_room as control_room
import pytest
from assay.artifacts.step_summaries import StepSummary, summarise_validation
from assay.tasks.control_room import StepProgress, artifact_key, publish_step_summary, step_progress
from prefect import flow, task
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterId,
)
from prefect.client.schemas.objects import Artifact
from prefect.runtime import flow_run

from assay.models.mrm import CaseValidation, Decision, SuiteValidation
from assay.mrm.topics import model_topics
from tests.mrm.test_topics import three_clusters

VALIDATION = SuiteValidation(
    cases=[
        CaseValidation(test_case_key="c1", cosine=0.9),
        CaseValidation(test_case_key="c2 <b>|</b>", cosine=0.1, outlier=True, reasons=["cosine 0.10 below 0.35"]),
    ],
    nli_status="no NLI model configured",
)
DECISION = Decision(
    step="test-validation", decided_by="person", decision={"excluded_case_keys": ["c2"]}, reviewer="Ana Lima"
)


def artifacts_of(run_id: str, key: str | None = None) -> dict[str, Artifact]:
    """The run's artifacts by key, as the UI's run page lists them."""
    artifact_filter = ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run_id]))
    if key is not None:
        artifact_filter.key = ArtifactFilterKey(any_=[key])
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=artifact_filter)
    return {artifact.key: artifact for artifact in found if artifact.key}


@flow(name="control-room-summary")
def publish_flow(summary: StepSummary, run_label: str) -> dict[str, Any]:
    keys = publish_step_summary("test-validation", summary, run_label)
    return {"run_id": str(flow_run.id), "keys": keys}


def test_a_step_summary_is_one_markdown_and_one_table_per_table_under_stable_keys() -> None:
    summary = summarise_validation(VALIDATION, DECISION)
    first = publish_flow(summary, "mrm <script>x</script>")
    second = publish_flow(summary, "mrm second")
    expected = ["mrm-3-test-validation-summary", "mrm-3-test-validation-cases"]
    assert first["keys"] == second["keys"] == expected

    found = artifacts_of(first["run_id"])
    assert sorted(found) == sorted(expected)
    markdown, table = found["mrm-3-test-validation-summary"], found["mrm-3-test-validation-cases"]
    assert (markdown.type, table.type) == ("markdown", "table")
    assert markdown.data == summary.markdown and "Ana Lima" in markdown.data
    assert json.loads(table.data) == summary.tables["cases"]
    assert json.loads(table.data)[1]["key"] == "c2 &lt;b&gt;&#124;&lt;/b&gt;"
    assert markdown.description == "Test validation: summary (run mrm &lt;script&gt;x&lt;/script&gt;)"
    assert table.description.startswith("Test validation: cases")
    assert markdown.task_run_id is not None

    with get_client(sync_client=True) as client:
        task_runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[first["run_id"]])))
    assert [run.name for run in task_runs] == ["summary-test-validation"]
    # the same keys in the next run: the UI's Artifacts page shows each key's history across runs
    assert sorted(artifacts_of(second["run_id"])) == sorted(expected)


def test_an_empty_table_is_still_published_so_the_ui_says_there_is_nothing() -> None:
    published = publish_flow(StepSummary(markdown="No case was flagged.", tables={"cases": []}), "mrm empty")
    table = artifacts_of(published["run_id"])["mrm-3-test-validation-cases"]
    assert table.type == "table" and json.loads(table.data) == []


def test_keys_hold_only_what_prefect_accepts() -> None:
    assert artifact_key("failure-clustering", "example questions") == "mrm-6-failure-clustering-example-questions"
    assert artifact_key("Robustness_Adversarial", "flips / rate") == "mrm-9-robustness-adversarial-flips-rate"


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def updates(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The progress values written after the artifact's creation, in order."""
    written: list[float] = []
    real = control_room.update_progress_artifact

    def recording(artifact_id: Any, progress: float, **kwargs: Any) -> Any:
        written.append(progress)
        return real(artifact_id, progress, **kwargs)

    monkeypatch.setattr(control_room, "update_progress_artifact", recording)
    yield written


@flow(name="control-room-progress")
def progress_flow(step: str, fractions: list[float], seconds_apart: float, finish: bool) -> str:
    clock = FakeClock()
    progress = StepProgress(step, clock=clock)
    for fraction in fractions:
        progress(fraction)
        clock.now += seconds_apart
    if finish:
        progress.finish()
    return str(flow_run.id)


def test_progress_is_throttled_to_one_update_a_second_and_always_ends_at_100(updates: list[float]) -> None:
    run_id = progress_flow("topic-modeling", [index / 40 for index in range(40)], 0.25, True)
    (artifact,) = artifacts_of(run_id).values()
    assert artifact.key == "mrm-1-topic-modeling-progress" and artifact.type == "progress"
    assert artifact.data == 100.0
    # 40 reports 0.25 s apart over 10 s: created at 0%, then one update a second, then the final 100%
    assert updates == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]


def test_progress_left_unfinished_shows_where_it_stopped(updates: list[float]) -> None:
    run_id = progress_flow("robustness-adversarial", [0.1, 0.5], 2.0, False)
    assert artifacts_of(run_id)["mrm-9-robustness-adversarial-progress"].data == 50.0
    assert updates == [50.0]


@flow(name="control-room-context")
def context_flow(fail: bool) -> str:
    with step_progress("calibration") as progress:
        progress(0.3)
        if fail:
            raise RuntimeError("the step failed")
    return str(flow_run.id)


def test_as_a_context_manager_progress_starts_at_0_and_ends_at_100_on_success() -> None:
    run_id = context_flow(False)
    assert artifacts_of(run_id, "mrm-5-calibration-progress")["mrm-5-calibration-progress"].data == 100.0
    state = context_flow(True, return_state=True)
    assert state.is_failed()
    failed = artifacts_of(str(state.state_details.flow_run_id))
    assert failed["mrm-5-calibration-progress"].data < 100.0


def test_outside_a_run_progress_does_nothing() -> None:
    progress = step_progress("outside-any-run")
    with progress:
        progress(0.5)
    assert progress.active is False and progress.artifact_id is None
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["mrm-outside-any-run-progress"]))
        )
    assert found == []


@task(name="topic-modeling-under-test")
def fit_topics(report: Callable[[float], None]) -> int:
    chunks, embedder = three_clusters()
    grid = [
        {"clustering": "kmeans", "kmeans_n_clusters": 3, "min_topic_size": 2},
        {"clustering": "kmeans", "kmeans_n_clusters": 2, "min_topic_size": 2},
    ]
    with step_progress("topic-modeling") as progress:

        def both(fraction: float) -> None:
            report(fraction)
            progress(fraction)

        return len(model_topics(chunks, embedder, grid=grid, seed=0, progress=both).topics)


@flow(name="control-room-topics")
def topics_flow(report: Callable[[float], None]) -> str:
    assert fit_topics(report) == 3
    return str(flow_run.id)


def test_topic_modeling_reports_each_grid_configuration_and_the_ui_bar_reaches_100() -> None:
    heard: list[float] = []
    run_id = topics_flow(heard.append)
    # 15 batches of embeddings over the first tenth, then each configuration once reduced and once scored
    assert heard[14:] == pytest.approx([0.1, 0.1 + 0.45 * 0.7, 0.55, 0.55 + 0.45 * 0.7, 1.0])
    artifact = artifacts_of(run_id)["mrm-1-topic-modeling-progress"]
    assert artifact.data == 100.0 and artifact.task_run_id is not None
