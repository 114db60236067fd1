"""Fault injection for bench/reliability.py: a host that fails in every way a real one does, and an object
store that goes down mid-run. A case is lost when it is missing from the test lab or from an evaluator's rows,
or when its failure is not recorded on it."""

import asyncio
import random
from pathlib import Path
from typing import ClassVar

from assay.hosts import CallPolicy, Host, HostAnswer, HostError, register_host
from assay.labs import build_test_lab
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.storage import LocalObjectStore
from assay.storage.errors import StorageError

FAULTS = ("refused", "timeout", "permanent", "garbage", "huge-error")


class FaultyHost(Host):
    type: ClassVar[str] = "bench-faulty-host"
    description: ClassVar[str] = "bench double failing on purpose"
    plan: ClassVar[dict[str, str]] = {}

    async def answer(self, case: TestCase) -> HostAnswer:
        fault = FaultyHost.plan.get(case.key)
        if fault == "refused":
            raise ConnectionRefusedError("connection refused")
        if fault == "timeout":
            await asyncio.sleep(5)
        if fault == "permanent":
            raise HostError("400 bad request")
        if fault == "garbage":
            raise ValueError("malformed JSON in the reply: '{\"choices\": ['")
        if fault == "huge-error":
            raise RuntimeError("x" * 1_000_000)
        return HostAnswer(actual_output=f"answer to {case.key}")


class OutageStore(LocalObjectStore):
    """Fails every write after the first ``healthy_puts``, as an S3 endpoint that goes away would."""

    def __init__(self, root: Path, healthy_puts: int) -> None:
        super().__init__(root)
        self.healthy_puts = healthy_puts

    def put(self, key: str, data: bytes, **options: object) -> None:  # type: ignore[override]
        if self.healthy_puts <= 0:
            raise StorageError(f"simulated outage writing {key}")
        self.healthy_puts -= 1
        super().put(key, data, **options)  # type: ignore[arg-type]


def inject(work: Path, count: int) -> tuple[int, int, str]:
    from assay.evaluators import run_evaluator
    from assay.evaluators.registry import build_evaluator

    register_host(FaultyHost)
    rng = random.Random(7)
    cases = [TestCase(key=f"c{i:04d}", prompt=f"question {i}", output_condition='"answer"') for i in range(count)]
    FaultyHost.plan = {case.key: rng.choice(FAULTS) for case in cases if rng.random() < 0.4}
    suite = TestSuite(name="faults", tests=[Test(key="t", test_cases=cases)])
    host = ModelHost(key="faulty", type=FaultyHost.type)
    policy = CallPolicy(timeout_s=0.2, retries=1, backoff_s=0.0, concurrency=16)
    outages = 0
    for healthy_puts in (2, 4):  # two outages, each after a few shards were saved
        try:
            build_test_lab(suite, [host], run_id="faults", store=OutageStore(work / "store", healthy_puts),
                           policy=policy, shard_size=16)
        except StorageError:
            outages += 1
    lab = build_test_lab(suite, [host], run_id="faults", store=LocalObjectStore(work / "store"), policy=policy)
    result = run_evaluator(build_evaluator("text_matching"), lab)
    keys = {row.test_case.key for row in lab.rows}
    unrecorded = [row for row in lab.rows if row.test_case.key in FaultyHost.plan and row.error is None]
    lost = (count - len(keys)) + (len(lab.rows) - len(result.rows)) + len(unrecorded)
    detail = (f"{len(FaultyHost.plan)} host faults of {len(FAULTS)} kinds in {count} cases, {outages} store outages; "
              f"lab rows {len(lab.rows)}, evaluator rows {len(result.rows)}, failures without a recorded error "
              f"{len(unrecorded)}")
    return len(FaultyHost.plan) + outages, lost, detail
