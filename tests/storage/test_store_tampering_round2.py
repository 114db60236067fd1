"""Round two of store tampering (issue 25, items 5 and 11): links and special files in a local store, a
rolled-back latest version, names outside the layout, directory markers and edited run states.

Each test plants what an insider with the store's credentials (not the signing key) could plant, then checks
that ``verify`` names it and goes on, and that ``get`` neither hangs nor serves it.
"""

import io
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.config import load_settings
from assay.models.artifacts import VerificationReport
from assay.storage import (
    ArtifactIntegrityError,
    ArtifactStore,
    LocalObjectStore,
    ObjectStore,
    Signer,
    StorageError,
    open_artifact_store,
)
from assay.storage.anchor import HeadAnchor
from assay.storage.errors import ObjectTooLargeError, UnsafeObjectError
from assay.storage.run_state_check import STATE_KEY
from assay.storage.runs import RunStates, state_key
from tests.storage.test_tampering import delete_version, key

ASSAY = Path(sys.executable).parent / "assay"
HANG_S = 30.0
ENTRIES = "artifacts/_journal/entries"
INDEX = "artifacts/_journal/index"


def problems(report: VerificationReport) -> list[tuple[str, str]]:
    return [(issue.name, issue.problem) for issue in report.issues]


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result or exception, failing the test (instead of hanging it) after ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the test thread
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds}s: it hangs"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.slow)])
def object_store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """Both backends, as in conftest, but every S3 test of this module shares one bucket (each under its own
    prefix): the session's ``weed mini`` answers 500 to new buckets after about 90 of them."""
    if request.param == "local":
        return LocalObjectStore(tmp_path / "store")
    return request.getfixturevalue("seaweed").object_store(bucket="assay-round2", prefix=uuid.uuid4().hex[:12])


@pytest.fixture
def signer(tmp_path: Path) -> Signer:
    keys = tmp_path / "keys"
    return Signer(key_file=keys / "artifact-signing.key", anchor=HeadAnchor(keys / "heads.json"))


def _history(store: ObjectStore, signer: Signer) -> ArtifactStore:
    """report v1..v3 (journal entries 1..3), then other v1 (entry 4)."""
    artifacts = ArtifactStore(store, signer=signer)
    for n in (1, 2, 3):
        artifacts.put("report", f"content {n}".encode(), filename="data.txt", content_type="text/plain")
    artifacts.put("other", b"other", filename="other.txt", content_type="text/plain")
    return artifacts


@pytest.fixture
def artifacts(object_store: ObjectStore, signer: Signer) -> ArtifactStore:
    return _history(object_store, signer)


@pytest.fixture
def local(tmp_path: Path, signer: Signer) -> ArtifactStore:
    return _history(LocalObjectStore(tmp_path / "store"), signer)


def _path(artifacts: ArtifactStore, stored_key: str) -> Path:
    store = artifacts.store
    assert isinstance(store, LocalObjectStore)
    return store.root.joinpath(*stored_key.split("/"))


def _replace_with_symlink(artifacts: ArtifactStore, stored_key: str, target: str) -> Path:
    path = _path(artifacts, stored_key)
    path.unlink()
    path.symlink_to(target)
    return path


# --- item 5: links and special files in a local store ------------------------------------------------------


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """A fresh Assay home with the signed history in its store; the environment of a CLI subprocess."""
    env = {"ASSAY_HOME": str(tmp_path / "home"), "ASSAY_CONFIG": str(tmp_path / "absent.toml")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    store = open_artifact_store(load_settings())
    for n in (1, 2, 3):
        store.put("report", f"content {n}".encode(), filename="data.txt", content_type="text/plain")
    return {**os.environ, **env, "COLUMNS": "200"}


def _assay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([str(ASSAY), *args], env=env, capture_output=True, text=True, timeout=HANG_S * 2)
    except subprocess.TimeoutExpired:
        pytest.fail(f"'assay {' '.join(args)}' hangs (killed after {HANG_S * 2:.0f}s)")


def test_cli_verify_and_get_refuse_a_symlink_to_dev_zero(home: dict[str, str]) -> None:
    content = Path(home["ASSAY_HOME"]) / "store" / "artifacts" / "report" / "v000003" / "data.txt"
    content.unlink()
    content.symlink_to("/dev/zero")

    verify = _assay(home, "artifacts", "verify")
    get = _assay(home, "artifacts", "get", "report")
    older = _assay(home, "artifacts", "get", "report", "--version", "2")

    assert verify.returncode == 1, verify.stderr
    assert "unsafe_object" in verify.stderr and "symbolic link (to /dev/zero)" in verify.stderr
    assert str(content) in verify.stderr.replace("\n", "")
    assert get.returncode in (1, 2) and get.stdout == ""
    assert "symbolic link (to /dev/zero)" in get.stderr and "Traceback" not in get.stderr
    assert older.returncode == 0 and older.stdout == "content 2"


def test_a_fifo_is_reported_and_never_opened(local: ArtifactStore) -> None:
    content = _path(local, key("report", 3, "data.txt"))
    content.unlink()
    os.mkfifo(content)

    report = within(HANG_S, local.verify)

    assert (key("report", 3, "data.txt"), "unsafe_object") in problems(report)
    assert any("a FIFO" in issue.detail for issue in report.issues)
    with pytest.raises(ArtifactIntegrityError, match="FIFO"):
        within(HANG_S, lambda: local.get("report"))


def test_a_symlinked_manifest_and_folder_are_reported_not_followed(local: ArtifactStore, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_bytes(local.store.get(key("report", 2, "manifest.json")))
    _replace_with_symlink(local, key("report", 2, "manifest.json"), str(elsewhere / "manifest.json"))
    version_folder = _path(local, "artifacts/other/v000002")
    version_folder.symlink_to(elsewhere, target_is_directory=True)

    report = within(HANG_S, local.verify)

    found = problems(report)
    assert (key("report", 2, "manifest.json"), "unsafe_object") in found
    assert ("artifacts/other/v000002", "unsafe_object") in found
    assert report.checked == 4  # every version was still checked
    with pytest.raises(UnsafeObjectError, match="symbolic link"):
        local.store.get(key("report", 2, "manifest.json"))
    with pytest.raises(UnsafeObjectError, match="symbolic link"):
        local.store.put("artifacts/other/v000002/planted.txt", b"would land outside the store")
    assert not (elsewhere / "planted.txt").exists()


def test_reads_stop_at_the_size_the_manifest_gives(object_store: ObjectStore, signer: Signer) -> None:
    artifacts = _history(object_store, signer)
    object_store.put(key("report", 3, "data.txt"), b"x" * 5_000_000, overwrite=True)

    with pytest.raises(ObjectTooLargeError, match="5000000 bytes, more than the 9 expected"):
        object_store.get(key("report", 3, "data.txt"), max_bytes=9)
    with pytest.raises(ArtifactIntegrityError, match="manifest says 9 bytes, stored content has 5000000 bytes"):
        artifacts.get("report")
    assert ("report", "size_mismatch") in problems(artifacts.verify())


def test_a_sparse_giant_content_file_is_not_read(local: ArtifactStore) -> None:
    with open(_path(local, key("report", 3, "data.txt")), "r+b") as handle:
        handle.truncate(1 << 40)  # 1 TiB of holes: reading it would never end

    with pytest.raises(ArtifactIntegrityError, match="stored content has 1099511627776 bytes"):
        within(HANG_S, lambda: local.get("report"))


# --- item 11a: a rolled-back latest version ------------------------------------------------------------------


def test_get_refuses_a_latest_whose_newer_version_was_removed(artifacts: ArtifactStore) -> None:
    delete_version(artifacts.store, "report", 3)

    with pytest.raises(ArtifactIntegrityError, match=r"'report' v2 is the newest .* index records v3"):
        artifacts.get("report")
    assert artifacts.get("report", 2)[1] == b"content 2"  # asked for by number: served
    assert ("report", "missing_version") in problems(artifacts.verify())


def test_get_refuses_when_the_index_hint_was_removed_too(artifacts: ArtifactStore) -> None:
    delete_version(artifacts.store, "report", 3)
    artifacts.store.delete(f"{INDEX}/report/v000003")

    with pytest.raises(ArtifactIntegrityError, match=r"v2 is the newest .* journal entry 3 records v3"):
        artifacts.get("report")


def test_get_refuses_when_the_journal_was_cut_back_with_it(artifacts: ArtifactStore) -> None:
    """The newest version, its entry and its hint removed: only this machine's anchor still knows."""
    delete_version(artifacts.store, "other", 1)
    artifacts.put("report", b"content 4", filename="data.txt", content_type="text/plain")  # entry 5
    delete_version(artifacts.store, "report", 4)
    artifacts.store.delete(f"{ENTRIES}/000000000005.json")
    artifacts.store.delete(f"{INDEX}/report/v000004")

    with pytest.raises(ArtifactIntegrityError, match=r"journal entry 5, the newest this machine wrote .* is gone"):
        artifacts.get("report")
    assert ("_journal", "truncated_journal") in problems(artifacts.verify())


def test_cli_get_refuses_a_rolled_back_latest(home: dict[str, str]) -> None:
    delete_version(LocalObjectStore(Path(home["ASSAY_HOME"]) / "store"), "report", 3)

    result = _assay(home, "artifacts", "get", "report")

    assert result.returncode == 2 and result.stdout == ""
    assert "rolled back" in result.stderr and "index records v3" in result.stderr


# --- item 11b/c: names outside the layout, directory markers, stray objects ------------------------------------


def test_verify_reports_a_name_holding_dots_and_goes_on(local: ArtifactStore) -> None:
    planted = _path(local, "artifacts/a\\..\\b/v000001")
    planted.mkdir(parents=True)
    (planted / "manifest.json").write_bytes(local.store.get(key("other", 1, "manifest.json")))

    report = within(HANG_S, local.verify)

    assert problems(report) == [("artifacts/a\\..\\b/v000001/manifest.json", "unexpected_object")]
    assert "backslashes are not allowed" in report.issues[0].detail
    assert report.checked == 4
    assert [manifest.name for manifest in local.list()] == ["other", "report"]


def test_cli_verify_exits_1_on_a_dotted_name(home: dict[str, str]) -> None:
    planted = Path(home["ASSAY_HOME"]) / "store" / "artifacts" / "x\\..\\y" / "v000001"
    planted.mkdir(parents=True)
    (planted / "manifest.json").write_text("{}")

    result = _assay(home, "artifacts", "verify")

    assert result.returncode == 1, result.stderr
    assert "unexpected_object" in result.stderr and "verified 3 artifact version(s)" in result.stdout


def test_verify_reports_an_object_outside_the_layout(artifacts: ArtifactStore) -> None:
    artifacts.store.put("artifacts/report/notes.txt", b"planted")
    artifacts.store.put("artifacts/_journal/extra.json", b"{}")

    assert problems(artifacts.verify()) == [
        ("artifacts/_journal/extra.json", "unexpected_object"),
        ("artifacts/report/notes.txt", "unexpected_object"),
    ]


@pytest.mark.slow
def test_verify_reports_a_directory_marker_on_seaweedfs(seaweed: Any, signer: Signer) -> None:
    store = seaweed.object_store(bucket="assay-round2", prefix=uuid.uuid4().hex[:12])
    artifacts = _history(store, signer)
    seaweed.client().put_object(store.bucket, f"{store.prefix}artifacts/report/v000002/", io.BytesIO(b""), 0)

    report = artifacts.verify()

    assert problems(report) == [("artifacts/report/v000002/", "unexpected_object")]
    assert "directory marker" in report.issues[0].detail
    assert artifacts.get("report")[1] == b"content 3"


# --- item 11d: edited run states ----------------------------------------------------------------------------


def test_verify_reports_an_edited_run_state(artifacts: ArtifactStore, signer: Signer) -> None:
    states = RunStates(artifacts.store, signer)
    record = states.start("inputs", "run-1", workflow="evaluate", parameters={"suite": "bank.json"})
    states.finish(record)
    assert artifacts.verify().ok

    stored = json.loads(artifacts.store.get(state_key("run-1")))
    stored["parameters"]["suite"] = "other.json"
    artifacts.store.put(state_key("run-1"), json.dumps(stored).encode(), overwrite=True)

    report = artifacts.verify()
    assert problems(report) == [(state_key("run-1"), "edited_run_state")]
    assert "signature does not match" in report.issues[0].detail


def test_an_unsigned_run_state_is_said_to_be_unchecked(artifacts: ArtifactStore) -> None:
    RunStates(artifacts.store).start("inputs", "run-2")

    report = artifacts.verify()

    assert report.ok
    assert any("run states: 1 carry no signature" in note and "run-2" in note for note in report.unchecked)


def test_the_state_key_pattern_matches_the_runs_module() -> None:
    assert STATE_KEY.fullmatch(state_key("20261126T205153-abcdef12"))


def test_a_state_read_refuses_a_linked_state(local: ArtifactStore, signer: Signer, tmp_path: Path) -> None:
    RunStates(local.store, signer).start("inputs", "run-3")
    _replace_with_symlink(local, state_key("run-3"), "/dev/zero")

    with pytest.raises(StorageError, match="symbolic link"):
        within(HANG_S, lambda: RunStates(local.store).get("run-3"))
    assert ("runs/run-3/state.json", "edited_run_state") in problems(within(HANG_S, local.verify))


# --- round three (issue 35, item 9) ------------------------------------------------------------------------


def test_a_manifest_edited_to_declare_a_giant_size_is_named_and_nothing_is_read(local: ArtifactStore) -> None:
    manifest_key = key("report", 3, "manifest.json")
    manifest = json.loads(local.store.get(manifest_key))
    manifest["size"] = 10 * 1024**3
    local.store.put(manifest_key, json.dumps(manifest).encode(), overwrite=True)
    with open(_path(local, key("report", 3, "data.txt")), "r+b") as handle:
        handle.truncate(10 * 1024**3)  # 10 GB of holes: the size the manifest now claims

    report = within(HANG_S, local.verify)
    assert ("report", "unreadable_manifest") in problems(report)
    assert any("size" in issue.detail and "less than or equal" in issue.detail for issue in report.issues)
    with pytest.raises(StorageError, match="unreadable manifest"):
        within(HANG_S, lambda: local.get("report", 3))


@pytest.mark.parametrize("filename", ["../../other/v000001/other.txt", "..", "a/b.txt"])
def test_a_manifest_naming_a_file_outside_its_folder_is_named_by_verify(
    artifacts: ArtifactStore, filename: str
) -> None:
    manifest_key = key("report", 2, "manifest.json")
    manifest = json.loads(artifacts.store.get(manifest_key))
    manifest["filename"] = filename
    artifacts.store.put(manifest_key, json.dumps(manifest).encode(), overwrite=True)

    report = artifacts.verify()
    assert ("report", "unreadable_manifest") in problems(report)
    assert any("is not a plain file name" in issue.detail for issue in report.issues)


def test_get_refuses_a_latest_when_a_later_journal_entry_was_removed(artifacts: ArtifactStore) -> None:
    """v3 removed with its hint and its entry (3), which is not the newest entry (4 is 'other'): the gap in the
    journal's numbering is what is left to tell."""
    delete_version(artifacts.store, "report", 3)
    artifacts.store.delete(f"{INDEX}/report/v000003")
    artifacts.store.delete(f"{ENTRIES}/000000000003.json")

    with pytest.raises(ArtifactIntegrityError, match=r"v2 is the newest .* journal entry 3, written after"):
        artifacts.get("report")


def test_an_edited_run_pointer_is_reported_and_not_followed(artifacts: ArtifactStore, signer: Signer) -> None:
    from assay.storage.runs import pointer_key

    states = RunStates(artifacts.store, signer)
    first = states.start("inputs-a", workflow="evaluate")
    other = states.start("inputs-b", workflow="evaluate")
    assert artifacts.verify().ok and states.start("inputs-a").run_id == first.run_id  # a rerun continues it

    pointer = json.loads(artifacts.store.get(pointer_key("inputs-a")))
    pointer["run_id"] = other.run_id
    artifacts.store.put(pointer_key("inputs-a"), json.dumps(pointer).encode(), overwrite=True)

    assert problems(artifacts.verify()) == [(pointer_key("inputs-a"), "edited_run_state")]
    assert states.start("inputs-a").run_id not in (first.run_id, other.run_id)  # a new run, not the pointed one
