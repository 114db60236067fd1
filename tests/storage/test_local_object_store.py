"""What only the local-directory backend has to get right: temp files and paths."""

import os
from pathlib import Path

import pytest

from assay.storage import ObjectExistsError, StorageError
from assay.storage.local import TEMP_PREFIX, LocalObjectStore


def temp_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.name.startswith(TEMP_PREFIX)]


def test_writes_leave_no_temp_files_even_when_refused(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    store.put("a/b.txt", b"1")
    store.put("a/b.txt", b"2", overwrite=True)
    with pytest.raises(ObjectExistsError):
        store.put("a/b.txt", b"3")

    assert temp_files(tmp_path) == []
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"2"


def test_list_ignores_temp_files_of_writes_in_flight(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    store.put("a/b.txt", b"1")
    (tmp_path / "a" / f"{TEMP_PREFIX}1234").write_bytes(b"partial")

    assert store.list() == ["a/b.txt"]


def test_keys_using_the_temp_prefix_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reserved"):
        LocalObjectStore(tmp_path).put(f"a/{TEMP_PREFIX}x", b"1")


def test_relative_root_is_resolved_and_described_as_a_file_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = LocalObjectStore(Path("rel/store"))
    store.put("k", b"v")

    assert store.describe() == (tmp_path / "rel" / "store").resolve().as_uri()
    assert (tmp_path / "rel" / "store" / "k").read_bytes() == b"v"


def test_key_naming_a_directory_is_a_storage_error_not_an_existing_object(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    store.put("dir/child", b"1")

    with pytest.raises(StorageError, match="directory") as caught:
        store.put("dir", b"2")
    assert not isinstance(caught.value, ObjectExistsError)


def test_overwrite_replaces_atomically_keeping_a_hard_link_reader_intact(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    store.put("k", b"old")
    snapshot = tmp_path / "snapshot"
    os.link(tmp_path / "k", snapshot)

    store.put("k", b"new", overwrite=True)

    # A reader holding the old file keeps whole old content: the object was replaced, not rewritten.
    assert snapshot.read_bytes() == b"old"
    assert store.get("k") == b"new"
