"""Tamper with a signed artifact store and its answer checkpoints in every way someone holding the store's
credentials (but not the signing key, kept outside the store) could, and count what `verify`, `get` and the
checkpoint loader fail to notice."""

import io
import json
import multiprocessing
import os
import time
from collections.abc import Callable
from pathlib import Path

from assay.hosts import Host, HostAnswer, register_host
from assay.labs import build_test_lab, checkpoint_prefix, load_checkpoint
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.models.artifacts import VerificationReport
from assay.storage import ArtifactStore, LocalObjectStore, ObjectStore, Signer, StorageError
from assay.storage.anchor import HeadAnchor
from assay.storage.runs import RunStates, state_key
from assay.testing.seaweed import running_seaweed
from tests.storage.test_tampering import key as _key
from tests.storage.test_tampering import rehash as _rehash
from tests.storage.test_tampering import rewrite_manifest as _manifest

Tampering = Callable[[ObjectStore], None]


def _delete(store: ObjectStore, prefix: str) -> None:
    for key in store.list(prefix):
        store.delete(key)


def _swap(store: ObjectStore) -> None:
    first, second = _key("report", 1, "data.txt"), _key("report", 2, "data.txt")
    one, two = store.get(first), store.get(second)
    store.put(first, two, overwrite=True)
    store.put(second, one, overwrite=True)


def _journal_entries(store: ObjectStore) -> list[str]:
    return store.list("artifacts/_journal/entries/")


def _forge_entry(store: ObjectStore) -> None:
    last = _journal_entries(store)[-1]
    entry = json.loads(store.get(last))
    entry["content_sha256"] = "0" * 64
    store.put(last, json.dumps(entry).encode(), overwrite=True)


def _drop_newest(store: ObjectStore) -> None:
    """The newest version of 'other' and its journal entry and index pointer: a clean-looking truncation."""
    _delete(store, "artifacts/other/v000001/")
    store.delete(_journal_entries(store)[-1])
    _delete(store, "artifacts/_journal/index/other/")


def _copy_newest_as_new_version(store: ObjectStore) -> None:
    for key in store.list("artifacts/report/v000003/"):
        store.put(key.replace("v000003", "v000004"), store.get(key))


def _local_path(store: ObjectStore, key: str) -> Path:
    assert isinstance(store, LocalObjectStore)
    return store.root.joinpath(*key.split("/"))


def _symlink_to_dev_zero(store: ObjectStore) -> None:
    path = _local_path(store, _key("report", 3, "data.txt"))
    path.unlink()
    path.symlink_to("/dev/zero")


def _fifo(store: ObjectStore) -> None:
    path = _local_path(store, _key("report", 3, "manifest.json"))
    path.unlink()
    os.mkfifo(path)


def _roll_back_latest(store: ObjectStore) -> None:
    """The newest version removed with its index hint: the store's latest is now v2."""
    _delete(store, "artifacts/report/v000003/")
    _delete(store, "artifacts/_journal/index/report/v000003")


def _dotted_name(store: ObjectStore) -> None:
    path = _local_path(store, "artifacts/a\\..\\b/v000001")
    path.mkdir(parents=True)
    (path / "manifest.json").write_bytes(store.get(_key("other", 1, "manifest.json")))


def _stray_object(store: ObjectStore) -> None:
    store.put("artifacts/report/notes", b"")


def _edit_run_state(store: ObjectStore) -> None:
    stored = json.loads(store.get(state_key(RUN_ID)))
    stored["parameters"]["suite"] = "edited.json"
    store.put(state_key(RUN_ID), json.dumps(stored).encode(), overwrite=True)


TAMPERINGS: dict[str, Tampering] = {
    "content edited": lambda s: s.put(_key("report", 2, "data.txt"), b"edited", overwrite=True),
    "content truncated": lambda s: s.put(_key("report", 3, "data.txt"), b"con", overwrite=True),
    "manifest edited": lambda s: _manifest(s, "report", 2, size=3),
    "content re-hashed with its manifest": lambda s: _rehash(s, "report", 2, b"edited answers"),
    "content swapped between versions": _swap,
    "middle version deleted": lambda s: _delete(s, "artifacts/report/v000002/"),
    "newest version and its journal entry deleted": _drop_newest,
    "whole artifact deleted": lambda s: _delete(s, "artifacts/other/"),
    "content deleted": lambda s: s.delete(_key("report", 1, "data.txt")),
    "manifest deleted": lambda s: s.delete(_key("report", 1, "manifest.json")),
    "manifest corrupted": lambda s: s.put(_key("report", 1, "manifest.json"), b"{not json", overwrite=True),
    "extra file in a version": lambda s: s.put(_key("report", 1, "extra.txt"), b"planted"),
    "extra version added": _copy_newest_as_new_version,
    "journal entry forged": _forge_entry,
    "journal entry deleted": lambda s: s.delete(_journal_entries(s)[1]),
    "content replaced by a symlink to /dev/zero": _symlink_to_dev_zero,
    "manifest replaced by a FIFO": _fifo,
    "latest rolled back (newest version and its hint removed)": _roll_back_latest,
    "artifact name holding '..'": _dotted_name,
    "stray object outside the layout": _stray_object,
    "run state edited": _edit_run_state,
}
RUN_ID = "bench-run"
CALL_TIMEOUT_S = 30.0
CHILD_MEMORY_BYTES = 2 << 30


class _EchoHost(Host):
    type = "bench-echo-host"
    description = "bench double"

    async def answer(self, case: TestCase) -> HostAnswer:
        return HostAnswer(actual_output=f"answer to {case.key}")


def _signed_store(root: Path) -> ArtifactStore:
    signer = Signer(key_file=root / "keys" / "signing.key", anchor=HeadAnchor(root / "keys" / "heads.json"))
    store = ArtifactStore(LocalObjectStore(root / "store"), signer=signer)
    for version in (1, 2, 3):
        store.put("report", f"content {version}".encode(), filename="data.txt", content_type="text/plain")
    store.put("other", b"other", filename="data.txt", content_type="text/plain")
    RunStates(store.store, signer).start("inputs", RUN_ID, parameters={"suite": "bank.json"})
    return store


def _checkpoint_caught(root: Path) -> bool:
    """Edit an answer inside a signed checkpoint shard: the loader must reject the shard."""
    register_host(_EchoHost)
    signer = Signer(key_file=root / "keys" / "signing.key", anchor=HeadAnchor(root / "keys" / "heads.json"))
    store = LocalObjectStore(root / "store")
    suite = TestSuite(name="s", tests=[Test(key="t", test_cases=[TestCase(key=f"c{i}", prompt="q") for i in range(4)])])
    build_test_lab(suite, [ModelHost(key="echo", type=_EchoHost.type)], run_id="r", store=store, signer=signer)
    shard = store.list(checkpoint_prefix("r", "echo"))[0]
    store.put(shard, store.get(shard).replace(b"answer to c1", b"edited answer"), overwrite=True)
    checkpoint = load_checkpoint(store, "r", "echo", signer)
    return bool(checkpoint.rejected) and all(row.actual_output != "edited answer" for row in checkpoint.rows.values())


def _directory_marker_caught(work: Path) -> bool:
    """A zero-byte key ending with '/' (what an S3 console's 'create folder' leaves) on a real SeaweedFS."""
    with running_seaweed(work) as server:
        objects = server.object_store()
        signer = Signer(key_file=work / "keys" / "signing.key", anchor=HeadAnchor(work / "keys" / "heads.json"))
        store = ArtifactStore(objects, signer=signer)
        store.put("report", b"content", filename="data.txt", content_type="text/plain")
        server.client().put_object(objects.bucket, "artifacts/report/v000001/", io.BytesIO(b""), 0)
        return _caught(store, {"report": b"content"})


def _in_child(call: Callable[[], object]) -> object:
    """``call()``'s result or exception, computed in a forked child that is killed when it hangs: a thread
    left reading a symlink to /dev/zero would fill the memory of the bench itself."""
    receiving, sending = multiprocessing.Pipe(duplex=False)

    def run() -> None:
        try:
            sending.send(call())
        except Exception as error:
            sending.send(StorageError(f"{type(error).__name__}: {error}"))

    child = multiprocessing.get_context("fork").Process(target=run, daemon=True)
    child.start()
    outcome: object = TimeoutError(f"no answer within {CALL_TIMEOUT_S:.0f}s")
    deadline = time.monotonic() + CALL_TIMEOUT_S
    while time.monotonic() < deadline:
        if receiving.poll(0.1):
            outcome = receiving.recv()
            break
        if _resident_bytes(child.pid) > CHILD_MEMORY_BYTES:
            outcome = TimeoutError(f"killed at over {CHILD_MEMORY_BYTES >> 20} MiB: reading without end")
            break
    child.kill()
    child.join()
    return outcome


def _resident_bytes(pid: int | None) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    kilobytes = next((line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")), "0")
    return int(kilobytes) * 1024


def _caught(store: ArtifactStore, served: dict[str, bytes]) -> bool:
    """``verify`` reports the tampering (without hanging) and ``get`` of each latest version either refuses
    (without hanging) or serves what was stored before it."""
    report = _in_child(store.verify)
    if not isinstance(report, VerificationReport) or report.ok:
        return False
    for name, before in served.items():
        got = _in_child(lambda name=name: store.get(name)[1])
        if isinstance(got, TimeoutError) or (isinstance(got, bytes) and got != before):
            return False
    return True


def tamper_and_verify(work: Path) -> tuple[int, int, str]:
    missed = []
    for index, (name, tamper) in enumerate(TAMPERINGS.items()):
        store = _signed_store(work / f"tamper-{index}")
        served = {artifact: store.get(artifact)[1] for artifact in ("report", "other")}
        tamper(store.store)
        if not _caught(store, served):
            missed.append(name)
    if not _checkpoint_caught(work / "tamper-checkpoint"):
        missed.append("checkpoint shard edited")
    if not _directory_marker_caught(work / "tamper-seaweed"):
        missed.append("S3 directory marker (SeaweedFS)")
    total = len(TAMPERINGS) + 2
    return total, len(missed), f"{total} kinds, missed: {', '.join(missed) or 'none'}"
