"""Building a test lab resumes after a crash without asking the host again for finished cases."""

import json
import logging
from pathlib import Path
from typing import ClassVar

import pytest

from assay.hosts import CallPolicy, Host, HostAnswer, register_host
from assay.labs import build_test_lab, load_checkpoint
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.storage import LocalObjectStore, Signer


class Crash(BaseException):
    """Stands for the process dying: not an Exception, so no layer records it as a host failure."""


class CountingHost(Host):
    type: ClassVar[str] = "counting-test-host"
    description: ClassVar[str] = "test double"
    calls: ClassVar[list[str]] = []
    crash_after: ClassVar[int | None] = None
    fail_keys: ClassVar[set[str]] = set()

    async def answer(self, case: TestCase) -> HostAnswer:
        if CountingHost.crash_after is not None and len(CountingHost.calls) >= CountingHost.crash_after:
            raise Crash
        CountingHost.calls.append(case.key)
        if case.key in CountingHost.fail_keys:
            raise ConnectionError("refused")
        return HostAnswer(actual_output=f"answer {case.key}")


register_host(CountingHost)
HOST = ModelHost(key="counting", type="counting-test-host")
SUITE = TestSuite(
    name="s", tests=[Test(key="t", test_cases=[TestCase(key=f"c{i:02d}", prompt=f"q{i}") for i in range(10)])]
)


@pytest.fixture(autouse=True)
def reset_host() -> None:
    CountingHost.calls = []
    CountingHost.crash_after = None
    CountingHost.fail_keys = set()


def test_rerun_after_a_crash_only_asks_for_unfinished_cases(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    CountingHost.crash_after = 7
    with pytest.raises(Crash):
        build_test_lab(SUITE, [HOST], run_id="r1", store=store, shard_size=3, policy=None)
    assert len(load_checkpoint(store, "r1", "counting").rows) == 6  # two full shards were persisted

    CountingHost.calls = []
    CountingHost.crash_after = None
    lab = build_test_lab(SUITE, [HOST], run_id="r1", store=store, shard_size=3)
    assert CountingHost.calls == ["c06", "c07", "c08", "c09"]
    assert [row.test_case.key for row in lab.rows] == [f"c{i:02d}" for i in range(10)]
    assert all(row.actual_output == f"answer {row.test_case.key}" for row in lab.rows)

    CountingHost.calls = []
    build_test_lab(SUITE, [HOST], run_id="r2", store=store, shard_size=3)
    assert len(CountingHost.calls) == 10  # another run id starts from scratch


def test_failed_cases_are_kept_and_retried_on_rerun(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path)
    CountingHost.fail_keys = {"c03"}

    policy = CallPolicy(retries=0)
    lab = build_test_lab(SUITE, [HOST], run_id="r", store=store, policy=policy)
    failed = [row for row in lab.rows if not row.answered]
    assert [row.test_case.key for row in failed] == ["c03"]
    assert "ConnectionError: refused" in failed[0].error
    assert len(lab.rows) == 10

    CountingHost.calls = []
    CountingHost.fail_keys = set()
    lab = build_test_lab(SUITE, [HOST], run_id="r", store=store, policy=policy)
    assert CountingHost.calls == ["c03"]
    assert all(row.answered for row in lab.rows)


def test_duplicate_host_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        build_test_lab(SUITE, [HOST, HOST], run_id="r")


def shard_keys(store: LocalObjectStore, run_id: str) -> list[str]:
    return store.list(f"runs/{run_id}/lab/counting/")


def test_edited_checkpoint_answers_are_rejected_and_asked_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = LocalObjectStore(tmp_path / "store")
    signer = Signer(key_file=tmp_path / "keys" / "signing.key")
    build_test_lab(SUITE, [HOST], run_id="r", store=store, signer=signer, shard_size=5)
    edited = next(key for key in shard_keys(store, "r") if b'"c02"' in store.get(key))
    shard = json.loads(store.get(edited))
    shard["rows"][0]["actual_output"] = "an answer the model never gave"
    store.put(edited, json.dumps(shard).encode(), overwrite=True)

    CountingHost.calls = []
    with caplog.at_level(logging.WARNING, logger="assay.labs"):
        lab = build_test_lab(SUITE, [HOST], run_id="r", store=store, signer=signer, shard_size=5)

    assert CountingHost.calls == [f"c{i:02d}" for i in range(5)]  # the edited shard's cases, asked again
    assert all(row.actual_output == f"answer {row.test_case.key}" for row in lab.rows)
    assert edited in caplog.text and "signature does not match" in caplog.text
    assert edited in load_checkpoint(store, "r", "counting", signer).rejected


def test_unsigned_or_unreadable_shards_are_rejected_not_fatal(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "store")
    signer = Signer(key_file=tmp_path / "keys" / "signing.key")
    build_test_lab(SUITE, [HOST], run_id="r", store=store, signer=signer, shard_size=5)
    first, second = shard_keys(store, "r")
    store.put(first, json.dumps(json.loads(store.get(first))["rows"]).encode(), overwrite=True)  # old format
    store.put(second, b"{truncated", overwrite=True)

    checkpoint = load_checkpoint(store, "r", "counting", signer)

    assert checkpoint.rows == {}
    assert set(checkpoint.rejected) == {first, second}
    assert "not JSON" in checkpoint.rejected[second]


def test_shard_of_another_run_is_rejected(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "store")
    signer = Signer(key_file=tmp_path / "keys" / "signing.key")
    build_test_lab(SUITE, [HOST], run_id="r", store=store, signer=signer, shard_size=10)
    (key,) = shard_keys(store, "r")
    store.put(key.replace("runs/r/", "runs/other/"), store.get(key))

    checkpoint = load_checkpoint(store, "other", "counting", signer)

    assert checkpoint.rows == {} and "written for run 'r'" in next(iter(checkpoint.rejected.values()))


def test_answer_shards_are_small_enough_for_the_progress_bar_and_never_tiny() -> None:
    from assay.labs import SHARD_CASES, SMALLEST_SHARD, shard_size_for

    for cases in range(1, 3000):
        size = shard_size_for(cases)
        assert SMALLEST_SHARD <= size <= SHARD_CASES
        if cases >= 5 * SMALLEST_SHARD:  # the answers are half of the evaluation's bar: each shard moves it <= 10%
            assert 0.5 * size / cases <= 0.1, cases
