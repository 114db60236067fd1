"""Building a test lab from a suite and hosts, resumable after a crash.

All pending cases of a host are asked in one stream (its policy's concurrency), and their rows are checkpointed
to the object store (``runs/<run_id>/lab/<model>/``) as they finish, a shard per ``shard_size`` rows: a slow or
timed-out call holds only its own slot, never a whole shard of other calls. A rerun with the same run id reads
the checkpoints, keeps every answered case and asks the host only for the rest, so a crash never costs more
than the calls in flight and the rows not yet written. Cases that failed are asked again on a rerun.

With a ``Signer`` each shard carries an HMAC of its rows, run and model: whoever can write the store cannot
slip edited answers into a resumed run, because a shard that fails its check is rejected (logged and
reported) and its cases are asked again, like a shard that was never written.
"""

import asyncio
import logging
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from pydantic import TypeAdapter, ValidationError

from assay.embeddings.engine import Embedder
from assay.hosts import CallPolicy, create_host, resolve
from assay.models import ModelHost, TestCase, TestLab, TestLabRow, TestSuite
from assay.progress import REPORTS
from assay.storage.base import ObjectStore
from assay.storage.checkpoints import check_checkpoint, parse_checkpoint, put_checkpoint
from assay.storage.signing import Signer

_ROWS = TypeAdapter(list[TestLabRow])
log = logging.getLogger(__name__)


class Checkpoint(NamedTuple):
    """Rows answered in earlier attempts, by test case key, and the shards rejected (key -> why)."""

    rows: dict[str, TestLabRow]
    rejected: dict[str, str]


def checkpoint_prefix(run_id: str, model_key: str) -> str:
    return f"runs/{run_id}/lab/{model_key}/"


def load_checkpoint(store: ObjectStore, run_id: str, model_key: str, signer: Signer | None = None) -> Checkpoint:
    """Rows already answered in earlier attempts of this run (successes win); shards that are unreadable,
    or fail their signature check, are rejected with a warning so their cases are asked again."""
    rows: dict[str, TestLabRow] = {}
    rejected: dict[str, str] = {}
    for key in store.list(checkpoint_prefix(run_id, model_key)):
        try:
            shard = _read_shard(store.get(key), run_id, model_key, signer)
        except ValueError as error:
            rejected[key] = str(error)
            log.warning(
                "checkpoint shard %s in %s rejected, its cases are asked again: %s", key, store.describe(), error
            )
            continue
        for row in shard:
            previous = rows.get(row.test_case.key)
            if previous is None or not previous.answered:
                rows[row.test_case.key] = row
    return Checkpoint(rows, rejected)


def _read_shard(data: bytes, run_id: str, model_key: str, signer: Signer | None) -> list[TestLabRow]:
    """The rows of one shard; ``ValueError`` saying why when it cannot be trusted."""
    document = parse_checkpoint(data)
    if isinstance(document, dict):
        rows = check_checkpoint(document, {"run_id": run_id, "model": model_key}, signer).get("rows")
    elif signer is not None and signer.has_key():  # shards written before they were signed: a bare list
        raise ValueError(f"its signature does not match its rows (checked with the {signer.describe()})")
    else:
        rows = document
    try:
        return _ROWS.validate_python(rows)
    except ValidationError as error:
        raise ValueError(f"invalid rows: {str(error).splitlines()[0]}") from error


def _save_shard(
    store: ObjectStore, run_id: str, model_key: str, rows: Sequence[TestLabRow], signer: Signer | None
) -> None:
    document = {"run_id": run_id, "model": model_key, "rows": _ROWS.dump_python(list(rows), mode="json")}
    put_checkpoint(store, f"{checkpoint_prefix(run_id, model_key)}shard-{uuid.uuid4().hex}.json", document, signer)


async def _answer_all(
    host_config: ModelHost,
    cases: Sequence[tuple[str, TestCase]],
    *,
    documents: Mapping[str, Sequence[str]],
    store: ObjectStore | None,
    signer: Signer | None,
    run_id: str,
    embedder: Callable[[], Embedder] | None,
    policy: CallPolicy,
    shard_size: int,
    on_shard: Callable[[str, int], None] | None,
) -> dict[str, TestLabRow]:
    done = load_checkpoint(store, run_id, host_config.key, signer).rows if store else {}
    pending = [(test_key, case) for test_key, case in cases if not (case.key in done and done[case.key].answered)]
    host = create_host(host_config, embedder)
    finished: list[TestLabRow] = []

    def checkpoint() -> None:
        rows = finished.copy()
        finished.clear()
        if store is not None:
            _save_shard(store, run_id, host_config.key, rows, signer)
        if on_shard is not None:
            on_shard(host_config.key, len(rows))

    def keep(row: TestLabRow) -> None:
        done[row.test_case.key] = row
        finished.append(row)
        if len(finished) >= shard_size:
            checkpoint()

    if pending:
        await resolve(host, pending, policy, documents, on_row=keep)
    if finished:
        checkpoint()
    return done


SHARD_CASES = 32
SMALLEST_SHARD = 8


def shard_size_for(cases: int) -> int:
    """Cases per answer shard (a checkpoint, and a progress report): at most ``SHARD_CASES``, and small enough
    that a suite's answers come in about ``REPORTS`` (20) shards (so a progress bar fed per shard moves every
    ~5%), but never under ``SMALLEST_SHARD``, so a large number of tiny checkpoint objects is never written."""
    return min(SHARD_CASES, max(SMALLEST_SHARD, math.ceil(cases / REPORTS)))


def build_test_lab(
    suite: TestSuite,
    hosts: Sequence[ModelHost],
    *,
    run_id: str,
    store: ObjectStore | None = None,
    signer: Signer | None = None,
    embedder: Callable[[], Embedder] | None = None,
    policy: CallPolicy | None = None,
    shard_size: int = SHARD_CASES,
    on_shard: Callable[[str, int], None] | None = None,
) -> TestLab:
    """Resolve every case of ``suite`` against every host; rows in (host, suite) order, none dropped.

    Pass the ``signer`` of the artifact store (``assay.storage.open_signer``) so checkpoints are signed
    and checked; without one they are trusted as read.
    """
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
                documents={test.key: test.documents for test in suite.tests},
                store=store,
                signer=signer,
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
