"""A run found by id is that run: when a later run exported to the same folder, the earlier one is read from
the artifact store, never from the folder that now holds someone else's files."""

from pathlib import Path

import pytest
from assay.artifacts.publish import publish_documents
from assay.artifacts.report.run_documents import load_run

from assay.models.artifacts import Producer
from assay.storage.artifacts import ArtifactStore
from assay.storage.local import LocalObjectStore
from assay.storage.runs import RunStates


def _export(runs: RunStates, store: ArtifactStore, folder: Path, label: str, score: float) -> str:
    record = runs.start(label * 64, workflow="evaluate")
    record = runs.exported_to(record, str(folder))
    publish_documents(
        {"summary.json": {"run_id": record.run_id, "score": score}},
        out_dir=folder,
        artifact_store=store,
        prefix="evaluations/demo",
        producer=Producer(flow="evaluate", run_id=record.run_id),
    )
    return runs.finish(record).run_id


def test_an_overwritten_export_folder_is_not_mistaken_for_the_earlier_run(tmp_path: Path) -> None:
    objects = LocalObjectStore(tmp_path / "store")
    runs, store = RunStates(objects), ArtifactStore(objects)
    folder = tmp_path / "demo-output"
    first = _export(runs, store, folder, "a", 0.9)
    second = _export(runs, store, folder, "b", 0.4)

    earlier = load_run(first, runs=runs, store=store)
    assert earlier.run_id == first and earlier.get("summary.json")["score"] == 0.9
    assert earlier.source == f"artifact store, run {first}"
    later = load_run(second, runs=runs, store=store)
    assert later.run_id == second and later.source == str(folder)
    assert load_run(folder).run_id == second
    with pytest.raises(ValueError, match="nothing in the artifact store"):
        load_run("no-such-run", runs=runs, store=store)


def _mrm_export(runs: RunStates, store: ArtifactStore, folder: Path, label: str) -> str:
    record = runs.exported_to(runs.start(label * 64, workflow="mrm-workflow"), str(folder))
    producer = Producer(flow="mrm-workflow", run_id=record.run_id)
    publish_documents({"report.json": {"steps": []}, "workflow_summary.json": {"run_id": record.run_id}},
                      out_dir=folder, artifact_store=store, prefix="mrm/demo", producer=producer)  # fmt: skip
    publish_documents({"summary.json": {"run_id": record.run_id}}, out_dir=folder / "automated-evaluation",
                      artifact_store=store, prefix="evaluations/demo-evaluation", producer=producer)  # fmt: skip
    return runs.finish(record).run_id


def test_an_earlier_mrm_run_is_read_whole_from_the_store_after_a_later_run_wrote_newer_versions(
    tmp_path: Path,
) -> None:
    objects = LocalObjectStore(tmp_path / "store")
    runs, store = RunStates(objects), ArtifactStore(objects)
    first = _mrm_export(runs, store, tmp_path / "demo-output", "c")
    _mrm_export(runs, store, tmp_path / "demo-output", "d")

    earlier = load_run(first, runs=runs, store=store)
    assert earlier.kind == "mrm" and earlier.run_id == first
    assert earlier.evaluation().get("summary.json") == {"run_id": first}
