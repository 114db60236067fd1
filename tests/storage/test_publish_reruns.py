"""A run resumed after a kill republishes its documents without adding duplicate versions (issue 7, item 13)."""

from pathlib import Path

from assay.artifacts.publish import publish_documents

from assay.models.artifacts import Producer
from assay.storage import ArtifactStore, LocalObjectStore, Signer

DOCUMENTS = {"summary.json": {"score": 0.5}, "board/leaderboard.md": "| model | score |\n"}


def publish(artifacts: ArtifactStore, out_dir: Path, run_id: str) -> list[str]:
    return publish_documents(
        DOCUMENTS,
        out_dir=out_dir,
        artifact_store=artifacts,
        prefix="evaluations/demo",
        producer=Producer(run_id=run_id),
    )


def test_same_run_publishes_once_another_run_adds_versions(tmp_path: Path) -> None:
    artifacts = ArtifactStore(LocalObjectStore(tmp_path / "store"), signer=Signer(key_file=tmp_path / "key"))

    names = publish(artifacts, tmp_path / "out", "run-1")
    publish(artifacts, tmp_path / "out", "run-1")  # the rerun after a kill

    assert [[m.version for m in artifacts.versions(name)] for name in names] == [[1], [1]]
    assert artifacts.verify().journal_entries == 2

    publish(artifacts, tmp_path / "out", "run-2")

    assert [[m.producer.run_id for m in artifacts.versions(name)] for name in names] == [["run-1", "run-2"]] * 2
    assert artifacts.verify().ok
