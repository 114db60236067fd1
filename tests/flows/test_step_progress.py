"""Progress bars of the long MRM steps: parts of one bar fed by several task runs, and the library calls
behind the steps reporting fractions that never stand still for more than a tenth of the step."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import assay.tasks.control_room as control_room
import pytest
from assay.evaluators import build_evaluator
from assay.evaluators.runner import PREPARE_SHARE, run_evaluator
from assay.evaluators.score_checkpoints import run_with_checkpoints
from assay.tasks.control_room import StepProgress, progress_part, step_progress
from assay.tasks.timing import step_scope
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey
from prefect.runtime import flow_run

from assay.embeddings import EmbeddingEngine
from assay.models import ModelHost, Test, TestCase, TestLab, TestLabRow, TestSuite
from assay.mrm.robustness import perturbed_only
from assay.mrm.topics import EMBEDDING_SHARE, model_topics
from assay.mrm.validation import validate_suite
from assay.progress import batches, part
from assay.storage.local import LocalObjectStore
from tests.flows.test_control_room import FakeClock, artifacts_of
from tests.mrm.test_topics import three_clusters
from tests.mrm.test_validation import CHUNKS, COPIED, HOURS


def assert_moves_every_tenth(heard: list[float]) -> None:
    """Non-decreasing, ends at 1.0, and no two successive reports (from 0) more than a tenth apart."""
    assert heard and heard[-1] == pytest.approx(1.0)
    steps = [later - earlier for earlier, later in zip([0.0, *heard], heard, strict=False)]
    assert min(steps) >= -1e-12, heard
    assert max(steps) <= 0.1 + 1e-9, heard


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """Every percentage written to the server, creation included, in order."""
    values: list[float] = []
    create, update = control_room.create_progress_artifact, control_room.update_progress_artifact

    def creating(progress: float, **kwargs: Any) -> Any:
        values.append(progress)
        return create(progress, **kwargs)

    def updating(artifact_id: Any, progress: float, **kwargs: Any) -> Any:
        values.append(progress)
        return update(artifact_id, progress, **kwargs)

    monkeypatch.setattr(control_room, "create_progress_artifact", creating)
    monkeypatch.setattr(control_room, "update_progress_artifact", updating)
    yield values


def test_a_part_maps_its_fractions_into_its_range() -> None:
    inner = StepProgress("s").part(0.2, 0.6).part(0.5, 1.0)
    assert (inner.start, inner.end) == pytest.approx((0.4, 0.6))
    with progress_part(0.2, 0.6), progress_part(0.5, 1.0):
        given = step_progress("s")
    assert (given.start, given.end) == pytest.approx((0.4, 0.6))
    assert (step_progress("s").start, step_progress("s").end) == (0.0, 1.0)  # the context is left behind
    heard: list[float] = []
    mapped = part(heard.append, 0.25, 0.75)
    assert mapped is not None and part(None, 0.0, 1.0) is None
    for fraction in (0.0, 0.5, 1.0):
        mapped(fraction)
    assert heard == [0.25, 0.5, 0.75]
    assert [len(batch) for batch in batches(45)] == [3] * 15 and batches(3) == [range(0, 1), range(1, 2), range(2, 3)]


@task(name="progress-part-under-test", cache_policy=NO_CACHE)  # both calls must run: no cache
def half_done() -> None:
    with step_progress() as progress:
        progress(0.5)


@flow(name="step-progress-parts")
def parts_flow() -> str:
    with step_scope("automated-evaluation"):
        with progress_part(0.0, 0.5):
            half_done()
        assert step_progress().fraction == 0.5  # where the next part starts
        with progress_part(0.5, 1.0):
            half_done()
    return str(flow_run.id)


def test_several_task_runs_feed_one_bar_of_their_step(written: list[float]) -> None:
    run_id = parts_flow()
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                flow_run_id=ArtifactFilterFlowRunId(any_=[run_id]),
                key=ArtifactFilterKey(any_=["mrm-4-automated-evaluation-progress"]),
            )
        )
    assert artifact.data == 100.0
    # the first task run creates the bar at 0%, later reports update it: 25% and 50% are a tenth apart
    assert written == [0.0, 25.0, 50.0, 75.0, 100.0]


@flow(name="step-progress-tenths")
def tenths_flow() -> str:
    progress = StepProgress("robustness-adversarial", clock=FakeClock())  # time stands still: all throttled
    for index in range(41):
        progress(index / 40)
    progress(0.5)  # never backwards
    return str(flow_run.id)


def test_a_tenth_is_always_written_however_fast_the_reports(written: list[float]) -> None:
    run_id = tenths_flow()
    assert written == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    assert artifacts_of(run_id)["mrm-9-robustness-adversarial-progress"].data == 100.0


def test_validation_reports_embeddings_and_bertscore_batches(engine: EmbeddingEngine) -> None:
    cases = [
        case.model_copy(update={"key": f"{case.key}-{index}", "prompt": f"{case.prompt} ({index})"})
        for index in range(6)
        for case in (
            COPIED,
            COPIED.model_copy(update={"key": "hours", "expected_output": HOURS.text, "sources": [HOURS.ref]}),
        )
    ]
    heard: list[float] = []
    result = validate_suite(
        TestSuite(name="s", tests=[Test(key="t", test_cases=cases)]), CHUNKS, engine, progress=heard.append
    )
    assert result.bertscore_status == "available" and len(result.cases) == 12
    assert_moves_every_tenth(heard)


def test_topic_modeling_reports_embeddings_and_twice_per_configuration() -> None:
    chunks, embedder = three_clusters()
    heard: list[float] = []
    model_topics(chunks, embedder, seed=0, progress=heard.append)  # the default grid: 8 configurations
    assert_moves_every_tenth(heard)
    assert [fraction for fraction in heard if fraction <= EMBEDDING_SHARE] == pytest.approx(
        [EMBEDDING_SHARE * done / 15 for done in range(1, 16)]  # 30 chunks in 15 batches
    )
    assert len(heard) == 15 + 2 * 8


def test_perturbing_reports_each_perturbator_and_intensity() -> None:
    suite = TestSuite(name="s", tests=[Test(key="t", test_cases=[COPIED])])
    heard: list[float] = []
    perturbed_only(suite, ["comma", "word_swap"], ["low", "medium", "high"], seed=0, progress=heard.append)
    assert heard == pytest.approx([done / 6 for done in range(1, 7)])


def lab_of(count: int) -> TestLab:
    rows = [
        TestLabRow(
            test_case=TestCase(key=f"c{i}", prompt=f"q {i}", output_condition='"£25"'),
            model_key="m",
            actual_output="£25",
        )
        for i in range(count)
    ]
    return TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)


def test_an_evaluator_reports_its_batch_work_then_each_case() -> None:
    heard: list[float] = []
    run_evaluator(build_evaluator("text_matching"), lab_of(20), heard.append)
    assert heard == pytest.approx([PREPARE_SHARE + (1 - PREPARE_SHARE) * done / 20 for done in range(21)])


def test_a_sharded_evaluator_reports_each_shard_within_the_whole(tmp_path: Path) -> None:
    heard: list[float] = []
    lab, store = lab_of(30), LocalObjectStore(tmp_path)
    run_with_checkpoints(
        build_evaluator("text_matching"), lab, store=store, run_id="r", shard_size=10, progress=heard.append
    )
    assert heard == sorted(heard) and heard[-1] == pytest.approx(1.0)
    # each shard's evaluator reports within its third: after its batch work, then case by case
    assert [round(fraction, 4) for fraction in heard[:12]] == [
        round((0.5 + 0.05 * done) / 3, 4) for done in range(11)
    ] + [round(1 / 3, 4)]
