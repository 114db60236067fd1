"""``verify`` and ``get`` catch every tampering someone with write access to the store can do (issue 7, item 12).

Each test writes a small signed history, tampers with the store the way an insider could (with the store's
own credentials, but without the signing key, which lives outside the store), and checks what is reported.
"""

import hashlib
import json
from pathlib import Path

import pytest

from assay.models.artifacts import VerificationReport
from assay.storage import ArtifactIntegrityError, ArtifactStore, ObjectStore, Signer
from assay.storage.anchor import HeadAnchor

ENTRIES = "artifacts/_journal/entries"
INDEX = "artifacts/_journal/index"


@pytest.fixture
def signer(tmp_path: Path) -> Signer:
    keys = tmp_path / "keys"
    return Signer(key_file=keys / "artifact-signing.key", anchor=HeadAnchor(keys / "heads.json"))


@pytest.fixture
def artifacts(object_store: ObjectStore, signer: Signer) -> ArtifactStore:
    """report v1..v3 (journal entries 1..3), then other v1 (entry 4)."""
    store = ArtifactStore(object_store, signer=signer)
    for n in (1, 2, 3):
        store.put("report", f"content {n}".encode(), filename="data.txt", content_type="text/plain")
    store.put("other", b"other", filename="other.txt", content_type="text/plain")
    return store


def problems(report: VerificationReport) -> list[tuple[str, int | None, str]]:
    return [(issue.name, issue.version, issue.problem) for issue in report.issues]


def key(name: str, version: int, filename: str) -> str:
    return f"artifacts/{name}/v{version:06d}/{filename}"


def rewrite_manifest(store: ObjectStore, name: str, version: int, **changes: object) -> None:
    path = key(name, version, "manifest.json")
    manifest = json.loads(store.get(path))
    manifest.update(changes)
    store.put(path, json.dumps(manifest, indent=2).encode(), overwrite=True)


def rehash(store: ObjectStore, name: str, version: int, data: bytes, filename: str = "data.txt") -> None:
    """Replace the content and make the manifest agree: what plain hash checks cannot see."""
    store.put(key(name, version, filename), data, overwrite=True)
    rewrite_manifest(store, name, version, sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def delete_version(store: ObjectStore, name: str, version: int) -> None:
    for stored in store.list(f"artifacts/{name}/v{version:06d}/"):
        store.delete(stored)


def test_a_clean_signed_store_verifies_and_checks_everything(artifacts: ArtifactStore) -> None:
    report = artifacts.verify()

    assert report.ok and report.checked == 4 and report.journal_entries == 4
    assert report.unchecked == []
    assert artifacts.get("report")[1] == b"content 3"


def test_content_rehashed_with_its_manifest(artifacts: ArtifactStore) -> None:
    rehash(artifacts.store, "report", 2, b"edited answers")

    report = artifacts.verify()

    assert problems(report) == [("report", 2, "journal_mismatch"), ("report", 3, "broken_chain")]
    with pytest.raises(ArtifactIntegrityError, match=r"'report' v2 .* does not match its journal entry 2"):
        artifacts.get("report", 2)


def test_content_swapped_between_versions(artifacts: ArtifactStore) -> None:
    store = artifacts.store
    first, second = store.get(key("report", 1, "data.txt")), store.get(key("report", 2, "data.txt"))
    rehash(store, "report", 1, second)
    rehash(store, "report", 2, first)

    report = artifacts.verify()

    assert ("report", 1, "journal_mismatch") in problems(report)
    assert ("report", 2, "journal_mismatch") in problems(report)
    with pytest.raises(ArtifactIntegrityError):
        artifacts.get("report", 1)


def test_deleted_middle_version(artifacts: ArtifactStore) -> None:
    delete_version(artifacts.store, "report", 2)

    report = artifacts.verify()

    assert problems(report) == [("report", 3, "broken_chain"), ("report", 2, "missing_version")]
    assert "journal entry 2" in report.issues[1].detail


def test_deleted_whole_artifact(artifacts: ArtifactStore) -> None:
    delete_version(artifacts.store, "other", 1)

    report = artifacts.verify()

    assert problems(report) == [("other", None, "missing_artifact")]
    assert artifacts.names() == ["report"]


def test_deleted_newest_version_with_its_journal_entry(artifacts: ArtifactStore) -> None:
    store = artifacts.store
    delete_version(store, "other", 1)
    store.delete(f"{ENTRIES}/000000000004.json")
    store.delete(f"{INDEX}/other/v000001")

    report = artifacts.verify()

    assert [(issue.problem, issue.seq) for issue in report.issues] == [("truncated_journal", 4)]
    assert "ends at entry 3" in report.issues[0].detail


def test_truncation_without_an_anchor_is_reported_as_unchecked(object_store: ObjectStore, tmp_path: Path) -> None:
    artifacts = ArtifactStore(object_store, signer=Signer(key_file=tmp_path / "key"))
    artifacts.put("report", b"x", filename="data.txt", content_type="text/plain")

    report = artifacts.verify()

    assert report.ok
    assert any("truncated journal goes unnoticed" in note for note in report.unchecked)


def test_extra_file_inside_a_version(artifacts: ArtifactStore) -> None:
    artifacts.store.put(key("report", 2, "extra.txt"), b"smuggled")

    report = artifacts.verify()

    assert problems(report) == [("report", 2, "unexpected_file")]
    assert "extra.txt" in report.issues[0].detail


def test_extra_version_without_journal_entry(artifacts: ArtifactStore) -> None:
    store = artifacts.store
    store.put(key("report", 4, "data.txt"), b"content 3")
    manifest = json.loads(store.get(key("report", 3, "manifest.json")))
    manifest["version"] = 4
    store.put(key("report", 4, "manifest.json"), json.dumps(manifest).encode())

    report = artifacts.verify()

    assert problems(report) == [("report", 4, "unjournaled_version")]
    with pytest.raises(ArtifactIntegrityError, match="no journal entry"):
        artifacts.get("report")  # the latest is the forged version: refused, not served


def test_forged_journal_entry(artifacts: ArtifactStore) -> None:
    store = artifacts.store
    rehash(store, "report", 3, b"edited answers")
    entry_key = f"{ENTRIES}/000000000003.json"
    entry = json.loads(store.get(entry_key))
    entry["manifest_sha256"] = hashlib.sha256(store.get(key("report", 3, "manifest.json"))).hexdigest()
    entry["sha256"] = hashlib.sha256(b"edited answers").hexdigest()
    store.put(entry_key, json.dumps(entry).encode(), overwrite=True)

    report = artifacts.verify()

    assert [(issue.problem, issue.seq) for issue in report.issues] == [("forged_journal_entry", 3)]
    with pytest.raises(ArtifactIntegrityError, match=r"journal entry 3 .* not signed by the signing key file"):
        artifacts.get("report", 3)


def test_deleted_journal_entry_breaks_the_journal_chain(artifacts: ArtifactStore) -> None:
    artifacts.store.delete(f"{ENTRIES}/000000000002.json")

    report = artifacts.verify()

    assert [(issue.problem, issue.seq) for issue in report.issues] == [
        ("broken_journal_chain", 3),
        ("unjournaled_version", None),
    ]
    assert "journal entry 2 is missing" in report.issues[0].detail


def test_manifest_chain_catches_a_deleted_version_even_without_a_key(object_store: ObjectStore) -> None:
    artifacts = ArtifactStore(object_store)
    for n in (1, 2, 3):
        artifacts.put("report", f"content {n}".encode(), filename="data.txt", content_type="text/plain")
    delete_version(object_store, "report", 2)

    report = artifacts.verify()

    assert problems(report) == [("report", 3, "broken_chain")]
    assert "v2" in report.issues[0].detail


def test_unsigned_store_says_what_it_could_not_check(object_store: ObjectStore) -> None:
    artifacts = ArtifactStore(object_store)
    artifacts.put("report", b"x", filename="data.txt", content_type="text/plain")

    report = artifacts.verify()

    assert report.ok and report.unchecked
    assert any("not journaled" in note for note in report.unchecked)


def test_a_missing_key_is_reported_and_not_created_by_verify(artifacts: ArtifactStore, tmp_path: Path) -> None:
    reader = ArtifactStore(artifacts.store, signer=Signer(key_file=tmp_path / "elsewhere" / "absent.key"))

    report = reader.verify()

    assert report.ok and report.journal_entries == 4
    assert any("absent.key is absent" in note for note in report.unchecked)
    assert not (tmp_path / "elsewhere").exists()


def test_journal_signed_with_another_key_is_forged(artifacts: ArtifactStore) -> None:
    other_key = Signer(key=b"\x01" * 32)

    report = ArtifactStore(artifacts.store, signer=other_key).verify()

    assert {issue.problem for issue in report.issues} == {"forged_journal_entry"}
    assert len(report.issues) == 4


def test_old_manifests_without_chain_still_read(artifacts: ArtifactStore, object_store: ObjectStore) -> None:
    legacy = ArtifactStore(object_store, root="legacy")
    legacy.put("report", b"x", filename="data.txt", content_type="text/plain")
    path = "legacy/report/v000001/manifest.json"
    manifest = json.loads(object_store.get(path))
    for field in ("previous_version", "previous_manifest_sha256"):
        manifest.pop(field)
    manifest["schema_version"] = 1
    object_store.put(path, json.dumps(manifest).encode(), overwrite=True)

    assert legacy.get("report")[1] == b"x"
    assert legacy.verify().ok


def test_unreadable_anchor_is_reported_not_raised(artifacts: ArtifactStore, signer: Signer) -> None:
    assert signer.anchor is not None
    signer.anchor.path.write_text("{not json")

    report = artifacts.verify()

    assert report.ok
    assert any("unreadable journal anchor" in note for note in report.unchecked)
