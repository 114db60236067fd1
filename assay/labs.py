"""Building a test lab from a suite and hosts, resumable after a crash.

Answers are checkpointed to the object store shard by shard (``runs/<run_id>/lab/<model>/``). A rerun with
the same run id reads the checkpoints, keeps every answered case and asks the host only for the rest, so
a crash never costs more than the shard in flight. Cases that failed are asked again on a rerun.
"""

import asyncio
import uuid
from collections.abc import Callable, Sequence

from pydantic import TypeAdapter

from assay.embeddings.engine import Embedder
from assay.hosts import CallPolicy, create_host, resolve
from assay.models import ModelHost, TestCase, TestLab, TestLabRow, TestSuite
from assay.storage.base import ObjectStore

_ROWS = TypeAdapter(list[TestLabRow])


def checkpoint_prefix(run_id: str, model_key: str) -> str:
    return f"runs/{run_id}/lab/{model_key}/"


def load_checkpoint(store: ObjectStore, run_id: str, model_key: str) -> dict[str, TestLabRow]:
    """Rows already answered in earlier attempts of this run, by test case key (successes win)."""
    rows: dict[str, TestLabRow] = {}
    for key in store.list(checkpoint_prefix(run_id, model_key)):
        for row in _ROWS.validate_json(store.get(key)):
            previous = rows.get(row.test_case.key)
            if previous is None or not previous.answered:
                rows[row.test_case.key] = row
    return rows


def _save_shard(store: ObjectStore, run_id: str, model_key: str, rows: Sequence[TestLabRow]) -> None:
    key = f"{checkpoint_prefix(run_id, model_key)}shard-{uuid.uuid4().hex}.json"
    store.put(key, _ROWS.dump_json(list(rows)), content_type="application/json")


async def _answer_all(
    host_config: ModelHost,
    cases: Sequence[tuple[str, TestCase]],
    *,
    store: ObjectStore | None,
    run_id: str,
    embedder: Callable[[], Embedder] | None,
    policy: CallPolicy,
    shard_size: int,
    on_shard: Callable[[str, int], None] | None,
) -> dict[str, TestLabRow]:
    done = load_checkpoint(store, run_id, host_config.key) if store else {}
    pending = [
        (test_key, case) for test_key, case in cases if not (case.key in done and done[case.key].answered)
    ]
    host = create_host(host_config, embedder)
    for start in range(0, len(pending), shard_size):
        shard = pending[start : start + shard_size]
        rows = await resolve(host, shard, policy)
        if store is not None:
            _save_shard(store, run_id, host_config.key, rows)
        done.update((row.test_case.key, row) for row in rows)
        if on_shard is not None:
            on_shard(host_config.key, len(rows))
    return done


def build_test_lab(
    suite: TestSuite,
    hosts: Sequence[ModelHost],
    *,
    run_id: str,
    store: ObjectStore | None = None,
    embedder: Callable[[], Embedder] | None = None,
    policy: CallPolicy | None = None,
    shard_size: int = 32,
    on_shard: Callable[[str, int], None] | None = None,
) -> TestLab:
    """Resolve every case of ``suite`` against every host; rows in (host, suite) order, none dropped."""
    if not hosts:
        raise ValueError("at least one host is needed to build a test lab")
    keys = [host.key for host in hosts]
    if len(set(keys)) != len(keys):
        raise ValueError(f"host keys must be unique, got {keys}")
    cases = [(test.key, case) for test, case in suite.cases()]
    rows: list[TestLabRow] = []
    for host_config in hosts:
        answered = asyncio.run(
            _answer_all(
                host_config,
                cases,
                store=store,
                run_id=run_id,
                embedder=embedder,
                policy=policy or CallPolicy(),
                shard_size=shard_size,
                on_shard=on_shard,
            )
        )
        rows.extend(answered[case.key] for _, case in cases)
    return TestLab(
        name=f"{suite.name} test lab",
        description=f"{suite.name} resolved against {', '.join(keys)} (run {run_id})",
        models=list(hosts),
        rows=rows,
    )
