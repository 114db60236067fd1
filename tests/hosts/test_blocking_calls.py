"""Hosts built on synchronous client libraries (boto3, h2ogpte) run their calls on the host's own threads: as
many calls are in flight as the call policy allows, whatever the machine's core count (Python's shared pool has
min(32, cores + 4) threads; on a 2-core machine 16 Bedrock calls queued there and spent their time-out waiting,
never sent)."""

import asyncio
import threading
import time
from typing import ClassVar

from assay.hosts import Host, HostAnswer, resolve
from assay.models import CallPolicy, ModelHost, TestCase

IN_FLIGHT = 40  # more than Python's shared pool holds on any machine


class BlockingHost(Host):
    """Each call blocks its thread until every call of the run has started."""

    type: ClassVar[str] = "blocking-double"
    description: ClassVar[str] = "test double"

    def __init__(self, config: ModelHost) -> None:
        super().__init__(config)
        self.all_started = threading.Barrier(IN_FLIGHT, timeout=10)
        self.thread_names: set[str] = set()

    def _call(self, prompt: str) -> str:
        self.thread_names.add(threading.current_thread().name)
        self.all_started.wait()  # BrokenBarrierError unless IN_FLIGHT calls run at once
        return f"answer to {prompt}"

    async def answer(self, case: TestCase) -> HostAnswer:
        return HostAnswer(actual_output=await self.blocking(self._call, case.prompt))


def test_as_many_blocking_calls_run_at_once_as_the_policy_allows_and_the_threads_are_let_go() -> None:
    host = BlockingHost(ModelHost(key="sync", type="blocking-double"))
    cases = [("t", TestCase(key=f"c{i}", prompt=f"q{i}")) for i in range(IN_FLIGHT)]
    rows = asyncio.run(resolve(host, cases, CallPolicy(concurrency=IN_FLIGHT, timeout_s=30, retries=0)))

    assert [row.error for row in rows if not row.answered] == []
    assert [row.actual_output for row in rows] == [f"answer to q{i}" for i in range(IN_FLIGHT)]
    assert len(host.thread_names) == IN_FLIGHT and all(name.startswith("assay-host-sync") for name in host.thread_names)
    deadline = time.monotonic() + 10  # the host's threads are let go when resolve ends
    while (left := [t.name for t in threading.enumerate() if t.name.startswith("assay-host-sync")]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert not left
