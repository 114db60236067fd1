"""The signed journal under concurrent writers and killed writers, and the signing key's handling."""

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from assay.config import Settings
from assay.models.artifacts import Producer
from assay.storage import (
    ArtifactStore,
    LocalObjectStore,
    ObjectStore,
    Signer,
    StorageError,
    open_artifact_store,
)
from assay.storage.anchor import HeadAnchor


@pytest.fixture
def signer(tmp_path: Path) -> Signer:
    return Signer(key_file=tmp_path / "keys" / "signing.key", anchor=HeadAnchor(tmp_path / "keys" / "heads.json"))


def test_concurrent_signed_puts_journal_every_version_once(object_store: ObjectStore, signer: Signer) -> None:
    artifacts = ArtifactStore(object_store, signer=signer)
    writers, puts_each = 4, 3
    start = threading.Barrier(writers)

    def write(writer: int) -> None:
        start.wait()
        for n in range(puts_each):
            artifacts.put("shared", f"{writer}/{n}".encode(), filename=f"p{writer % 2}.txt", content_type="text/plain")

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    report = artifacts.verify()
    assert report.ok, report.issues
    assert report.checked == report.journal_entries == writers * puts_each
    assert signer.anchor is not None and signer.anchor.head(artifacts.describe()).seq == writers * puts_each


def test_rerun_journals_the_version_its_killed_writer_committed(object_store: ObjectStore, signer: Signer) -> None:
    run = Producer(run_id="run-1")
    ArtifactStore(object_store, signer=signer).put("first", b"x", filename="x.txt", content_type="text/plain")
    # Killed between committing the manifest and journaling it: what an unsigned put leaves behind.
    ArtifactStore(object_store).put("report", b"done", filename="r.txt", content_type="text/plain", producer=run)
    artifacts = ArtifactStore(object_store, signer=signer)
    assert [issue.problem for issue in artifacts.verify().issues] == ["unjournaled_version"]

    manifest = artifacts.put("report", b"done", filename="r.txt", content_type="text/plain", producer=run)

    assert manifest.version == 1
    assert artifacts.verify().ok
    assert artifacts.get("report")[1] == b"done"


def test_key_file_is_created_owner_only_on_first_signature(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "signing.key"
    signer = Signer(key_file=path)

    assert not signer.has_key() and not path.exists()
    mac = signer.sign(b"payload")

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(bytes.fromhex(path.read_text())) == 32
    assert Signer(key_file=path).check(b"payload", mac) is True
    assert Signer(key_file=path).check(b"edited", mac) is False
    assert path.read_text().strip() not in repr(signer)


def test_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "signing.key"
    Signer(key_file=path).sign(b"x")
    os.chmod(path, 0o644)

    with pytest.raises(StorageError, match=r"readable by other users .* chmod 600"):
        Signer(key_file=path).sign(b"x")


def test_key_from_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    signer = Signer(key_env="TEST_ASSAY_SIGNING_KEY")
    monkeypatch.delenv("TEST_ASSAY_SIGNING_KEY", raising=False)
    assert signer.check(b"x", "0" * 64) is None
    with pytest.raises(StorageError, match=r"TEST_ASSAY_SIGNING_KEY .* is not set"):
        signer.sign(b"x")

    monkeypatch.setenv("TEST_ASSAY_SIGNING_KEY", "too short")
    with pytest.raises(StorageError, match="at least 32 bytes as hex"):
        Signer(key_env="TEST_ASSAY_SIGNING_KEY").sign(b"x")

    monkeypatch.setenv("TEST_ASSAY_SIGNING_KEY", "ab" * 32)
    assert Signer(key_env="TEST_ASSAY_SIGNING_KEY").check(b"x", Signer(key=b"\xab" * 32).sign(b"x")) is True


def test_settings_keep_the_key_and_anchor_outside_the_store(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    artifacts = open_artifact_store(settings)

    artifacts.put("report", b"x", filename="x.txt", content_type="text/plain")

    key = tmp_path / "home" / "keys" / "artifact-signing.key"
    assert key.exists() and settings.store_path.resolve() not in key.resolve().parents
    heads = json.loads((tmp_path / "home" / "keys" / "artifact-journal-heads.json").read_text())
    assert heads[artifacts.describe()]["seq"] == 1
    assert key.read_text().strip() not in json.dumps(settings.public_dump())
    stored = b"".join(artifacts.store.get(name) for name in artifacts.store.list())
    assert key.read_text().strip().encode() not in stored
    assert artifacts.verify().ok and artifacts.verify().unchecked == []


def test_journal_name_is_reserved(tmp_path: Path) -> None:
    artifacts = ArtifactStore(LocalObjectStore(tmp_path))

    with pytest.raises(ValueError, match="reserved for the journal"):
        artifacts.put("_journal/x", b"x", filename="x.txt", content_type="text/plain")


class ListingCounter(LocalObjectStore):
    """Counts listings of the journal's entries: what a commit would cost on S3 as the journal grows."""

    journal_listings = 0

    def list(self, prefix: str = "") -> list[str]:
        if "_journal/entries" in prefix:
            ListingCounter.journal_listings += 1
        return super().list(prefix)


def test_commits_find_the_journal_tail_from_the_anchor_without_listing(tmp_path: Path, signer: Signer) -> None:
    artifacts = ArtifactStore(ListingCounter(tmp_path / "store"), signer=signer)
    artifacts.put("first", b"1", filename="a.txt", content_type="text/plain")  # no anchor yet: lists once
    ListingCounter.journal_listings = 0

    for n in range(20):
        artifacts.put(f"report-{n}", b"x", filename="a.txt", content_type="text/plain")

    assert ListingCounter.journal_listings == 0
    assert artifacts.verify().ok


def test_a_stale_anchor_still_links_to_the_real_tail(tmp_path: Path) -> None:
    """Another machine (its own anchor) wrote entries this machine's anchor does not know: the commit collides,
    lists the journal once, and links to the real tail."""
    store = LocalObjectStore(tmp_path / "store")
    key = tmp_path / "keys" / "signing.key"
    here = ArtifactStore(store, signer=Signer(key_file=key, anchor=HeadAnchor(tmp_path / "keys" / "here.json")))
    there = ArtifactStore(store, signer=Signer(key_file=key, anchor=HeadAnchor(tmp_path / "keys" / "there.json")))
    here.put("a", b"1", filename="a.txt", content_type="text/plain")
    for n in range(3):
        there.put("b", f"{n}".encode(), filename="b.txt", content_type="text/plain")

    here.put("a", b"2", filename="a.txt", content_type="text/plain")

    report = here.verify()
    assert report.journal_entries == 5
    assert [issue.problem for issue in report.issues] == []
