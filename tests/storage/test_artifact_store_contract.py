"""The versioned artifact store, on both object store backends."""

import hashlib
import json
import threading
from datetime import UTC, datetime

import pytest

from assay.models.artifacts import MANIFEST_SCHEMA_VERSION, Producer
from assay.storage import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ArtifactStore,
    ObjectStore,
)

NAME = "evaluations/demo/summary.json"


@pytest.fixture
def artifacts(object_store: ObjectStore) -> ArtifactStore:
    return ArtifactStore(object_store)


def put_text(artifacts: ArtifactStore, name: str, text: str, filename: str = "data.txt") -> int:
    return artifacts.put(name, text.encode(), filename=filename, content_type="text/plain").version


def test_each_put_creates_the_next_version_and_keeps_old_ones(artifacts: ArtifactStore) -> None:
    versions = [put_text(artifacts, "report", f"content {n}") for n in range(3)]

    assert versions == [1, 2, 3]
    for version in versions:
        _, data = artifacts.get("report", version)
        assert data == f"content {version - 1}".encode()
    assert [manifest.version for manifest in artifacts.versions("report")] == [1, 2, 3]


def test_latest_and_get_without_version_give_the_newest(artifacts: ArtifactStore) -> None:
    put_text(artifacts, "report", "old")
    put_text(artifacts, "report", "new")

    manifest, data = artifacts.get("report")

    assert artifacts.latest("report").version == 2
    assert (manifest.version, data) == (2, b"new")


def test_layout_is_name_version_dir_content_and_manifest(artifacts: ArtifactStore) -> None:
    artifacts.put_json(NAME, {"score": 1})
    artifacts.put_json(NAME, {"score": 2})

    assert artifacts.store.list() == [
        f"artifacts/{NAME}/v000001/manifest.json",
        f"artifacts/{NAME}/v000001/summary.json",
        f"artifacts/{NAME}/v000002/manifest.json",
        f"artifacts/{NAME}/v000002/summary.json",
    ]


def test_manifest_describes_the_content_and_its_producer(artifacts: ArtifactStore) -> None:
    data = bytes(range(256))
    producer = Producer(flow="evaluate", run_id="run-42")
    before = datetime.now(UTC)

    returned = artifacts.put(
        "bin/blob",
        data,
        filename="blob.bin",
        content_type="application/x-test",
        producer=producer,
        metadata={"suite": "demo"},
    )
    stored, _ = artifacts.get("bin/blob", 1)

    assert stored == returned
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
    assert stored.size == 256
    assert stored.content_type == "application/x-test"
    assert stored.filename == "blob.bin"
    assert stored.producer == producer
    assert stored.metadata == {"suite": "demo"}
    assert stored.schema_version == MANIFEST_SCHEMA_VERSION
    assert stored.created_at.tzinfo is not None and stored.created_at.utcoffset().total_seconds() == 0
    assert before <= stored.created_at <= datetime.now(UTC)
    assert artifacts.latest("bin/blob").producer.tool == "assay"


def test_put_json_is_canonical(artifacts: ArtifactStore) -> None:
    first = artifacts.put_json(NAME, {"b": 1, "a": ["é", 2]})
    second = artifacts.put_json(NAME, {"a": ["é", 2], "b": 1})
    _, data = artifacts.get(NAME, 1)

    assert first.sha256 == second.sha256
    assert (first.filename, first.content_type) == ("summary.json", "application/json")
    assert data.decode("utf-8") == '{\n  "a": [\n    "é",\n    2\n  ],\n  "b": 1\n}\n'
    assert json.loads(data) == {"a": ["é", 2], "b": 1}


def test_missing_artifact_and_version_errors_say_what_exists(artifacts: ArtifactStore) -> None:
    put_text(artifacts, "report", "one")
    put_text(artifacts, "report", "two")

    with pytest.raises(ArtifactNotFoundError, match="'nothing'"):
        artifacts.get("nothing")
    with pytest.raises(ArtifactNotFoundError, match="'nothing'"):
        artifacts.latest("nothing")
    with pytest.raises(ArtifactNotFoundError, match=r"no version 7 of artifact 'report'.*available: 1, 2"):
        artifacts.get("report", 7)
    assert artifacts.versions("nothing") == []


def test_names_and_list_give_latest_per_name(artifacts: ArtifactStore) -> None:
    artifacts.put_json("evaluations/demo/summary.json", {"run": 1})
    artifacts.put_json("evaluations/demo/summary.json", {"run": 2})
    artifacts.put_json("evaluations/other/summary.json", {"run": 1})
    put_text(artifacts, "corpus", "parent artifact")
    put_text(artifacts, "corpus/chunks", "child artifact")

    assert artifacts.names() == [
        "corpus",
        "corpus/chunks",
        "evaluations/demo/summary.json",
        "evaluations/other/summary.json",
    ]
    assert artifacts.names("evaluations/") == [
        "evaluations/demo/summary.json",
        "evaluations/other/summary.json",
    ]
    latest = artifacts.list("evaluations/")
    assert [(m.name, m.version) for m in latest] == [
        ("evaluations/demo/summary.json", 2),
        ("evaluations/other/summary.json", 1),
    ]
    assert [m.name for m in artifacts.versions("corpus")] == ["corpus"]
    assert artifacts.get("corpus")[1] == b"parent artifact"


@pytest.mark.parametrize("name", ["", "/abs", "a/../b", "v000001", "runs/v123456/x", "a\\b"])
def test_invalid_names_are_rejected(artifacts: ArtifactStore, name: str) -> None:
    with pytest.raises(ValueError, match=repr(name).replace("\\", "\\\\")):
        artifacts.put(name, b"x", filename="x.txt", content_type="text/plain")
    assert artifacts.store.list() == []


@pytest.mark.parametrize("filename", ["manifest.json", "a/b.txt", "", ".."])
def test_invalid_filenames_are_rejected(artifacts: ArtifactStore, filename: str) -> None:
    with pytest.raises(ValueError, match="invalid"):
        artifacts.put("report", b"x", filename=filename, content_type="text/plain")
    assert artifacts.store.list() == []


def test_verify_passes_on_clean_data(artifacts: ArtifactStore) -> None:
    for n in range(3):
        put_text(artifacts, "a", str(n))
    put_text(artifacts, "b/c", "x")

    report = artifacts.verify()

    assert report.ok and report.issues == []
    assert report.checked == 4
    assert artifacts.verify("b/").checked == 1


def test_verify_detects_tampered_content(artifacts: ArtifactStore) -> None:
    put_text(artifacts, "report", "original")
    put_text(artifacts, "report", "second")
    put_text(artifacts, "report", "third")
    store = artifacts.store
    store.put("artifacts/report/v000001/data.txt", b"ORIGINAL", overwrite=True)  # same size
    store.put("artifacts/report/v000002/data.txt", b"much longer than before", overwrite=True)

    report = artifacts.verify()

    assert not report.ok and report.checked == 3
    assert [(i.version, i.problem) for i in report.issues] == [(1, "hash_mismatch"), (2, "size_mismatch")]
    with pytest.raises(ArtifactIntegrityError, match="does not match its manifest"):
        artifacts.get("report", 1)
    assert artifacts.get("report", 3)[1] == b"third"


def test_verify_detects_missing_content(artifacts: ArtifactStore) -> None:
    put_text(artifacts, "report", "x")
    artifacts.store.delete("artifacts/report/v000001/data.txt")

    report = artifacts.verify()

    assert [(i.name, i.version, i.problem) for i in report.issues] == [("report", 1, "missing_content")]
    with pytest.raises(ArtifactIntegrityError, match="missing"):
        artifacts.get("report")


def test_verify_reports_corrupt_manifest_without_raising(artifacts: ArtifactStore) -> None:
    put_text(artifacts, "report", "x")
    put_text(artifacts, "report", "y")
    artifacts.store.put("artifacts/report/v000001/manifest.json", b"{not json", overwrite=True)

    report = artifacts.verify()

    # v2 links to v1's manifest, so rewriting v1 also breaks v2's link
    assert [(i.version, i.problem) for i in report.issues] == [(1, "unreadable_manifest"), (2, "broken_chain")]
    assert "manifest.json" in report.issues[0].detail


def test_verify_reports_missing_manifest_and_put_skips_that_version(artifacts: ArtifactStore) -> None:
    put_text(artifacts, "report", "x")
    put_text(artifacts, "report", "y")
    artifacts.store.delete("artifacts/report/v000002/manifest.json")

    report = artifacts.verify()

    assert [(i.version, i.problem) for i in report.issues] == [(2, "missing_manifest")]
    assert [m.version for m in artifacts.versions("report")] == [1]
    assert put_text(artifacts, "report", "z") == 3


def test_concurrent_puts_get_distinct_versions_and_lose_nothing(artifacts: ArtifactStore) -> None:
    writers, puts_each = 6, 3
    results: list[tuple[int, bytes]] = []
    lock = threading.Lock()
    start = threading.Barrier(writers)

    def write(writer: int) -> None:
        start.wait()
        for n in range(puts_each):
            # Two filenames so races are decided both on the content object and on the manifest.
            data = f"writer {writer} put {n}".encode()
            manifest = artifacts.put(
                "shared", data, filename=f"part-{writer % 2}.txt", content_type="text/plain"
            )
            with lock:
                results.append((manifest.version, data))

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    total = writers * puts_each
    assert sorted(version for version, _ in results) == list(range(1, total + 1))
    for version, data in results:
        assert artifacts.get("shared", version)[1] == data
    report = artifacts.verify()
    assert report.ok and report.checked == total


class _RivalCommitsFirst(ObjectStore):
    """Delegates to ``inner``; just before the first content write, a rival commits the same version.

    That is the race two writers with different filenames can run: both listed the versions at the same
    moment, both content writes succeed (different keys), and the manifest decides who owns the version.
    """

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.rival_done = False

    def put(self, key: str, data: bytes, *, content_type: str = "", overwrite: bool = False) -> None:
        if not self.rival_done:
            self.rival_done = True
            ArtifactStore(self.inner).put("report", b"rival", filename="rival.txt", content_type="text/plain")
        self.inner.put(key, data, content_type=content_type, overwrite=overwrite)

    def get(self, key: str, *, max_bytes: int | None = None) -> bytes:
        return self.inner.get(key, max_bytes=max_bytes)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list(self, prefix: str = "") -> list[str]:
        return self.inner.list(prefix)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def describe(self) -> str:
        return self.inner.describe()


def test_writer_losing_the_manifest_race_moves_to_the_next_version(object_store: ObjectStore) -> None:
    racing = ArtifactStore(_RivalCommitsFirst(object_store))

    mine = racing.put("report", b"mine", filename="mine.txt", content_type="text/plain")

    assert mine.version == 2
    assert object_store.list("artifacts/report/v000001/") == [
        "artifacts/report/v000001/manifest.json",
        "artifacts/report/v000001/rival.txt",
    ]
    assert racing.get("report", 1)[1] == b"rival"
    assert racing.get("report", 2)[1] == b"mine"
    assert racing.verify().ok


def test_invalid_metadata_is_rejected_before_anything_is_written(artifacts: ArtifactStore) -> None:
    not_strings: dict = {"n": 1}

    with pytest.raises(ValueError, match="metadata"):
        artifacts.put("report", b"x", filename="x.txt", content_type="text/plain", metadata=not_strings)
    assert artifacts.store.list() == []


def test_rerun_of_the_same_run_gets_its_version_back_instead_of_a_duplicate(artifacts: ArtifactStore) -> None:
    run = Producer(flow="evaluate", run_id="run-1")
    first = artifacts.put_json(NAME, {"score": 1}, producer=run)

    again = artifacts.put_json(NAME, {"score": 1}, producer=run)

    assert again == first
    assert [manifest.version for manifest in artifacts.versions(NAME)] == [1]


def test_another_run_other_content_or_no_run_id_adds_a_version(artifacts: ArtifactStore) -> None:
    artifacts.put_json(NAME, {"score": 1}, producer=Producer(run_id="run-1"))
    artifacts.put_json(NAME, {"score": 1}, producer=Producer(run_id="run-2"))
    artifacts.put_json(NAME, {"score": 2}, producer=Producer(run_id="run-2"))
    artifacts.put_json(NAME, {"score": 2})
    artifacts.put_json(NAME, {"score": 2})

    assert [(m.version, m.producer.run_id) for m in artifacts.versions(NAME)] == [
        (1, "run-1"),
        (2, "run-2"),
        (3, "run-2"),
        (4, ""),
        (5, ""),
    ]


def test_rerun_does_not_reuse_a_version_whose_content_was_tampered_with(artifacts: ArtifactStore) -> None:
    run = Producer(run_id="run-1")
    artifacts.put("report", b"original", filename="data.txt", content_type="text/plain", producer=run)
    artifacts.store.put("artifacts/report/v000001/data.txt", b"tampered", overwrite=True)

    again = artifacts.put("report", b"original", filename="data.txt", content_type="text/plain", producer=run)

    assert again.version == 2
    assert artifacts.get("report")[1] == b"original"
