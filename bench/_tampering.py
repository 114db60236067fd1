"""Tamper with a signed artifact store and its answer checkpoints in every way someone holding the store's
credentials (but not the signing key, kept outside the store) could, and count what `verify`, `get` and the
checkpoint loader fail to notice."""

import json
from collections.abc import Callable
from pathlib import Path

from assay.hosts import Host, HostAnswer, register_host
from assay.labs import build_test_lab, checkpoint_prefix, load_checkpoint
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.storage import ArtifactStore, LocalObjectStore, ObjectStore, Signer
from assay.storage.anchor import HeadAnchor
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
}


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


def tamper_and_verify(work: Path) -> tuple[int, int, str]:
    missed = []
    for index, (name, tamper) in enumerate(TAMPERINGS.items()):
        store = _signed_store(work / f"tamper-{index}")
        tamper(store.store)
        if store.verify().ok:
            missed.append(name)
    if not _checkpoint_caught(work / "tamper-checkpoint"):
        missed.append("checkpoint shard edited")
    total = len(TAMPERINGS) + 1
    return total, len(missed), f"{total} kinds, missed: {', '.join(missed) or 'none'}"
