"""Seconds spent in library code per flow run, so a flow can report how much of its wall time is Prefect's."""

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

_SECONDS: dict[str, float] = defaultdict(float)
_LOCK = threading.Lock()


@contextmanager
def library_time() -> Iterator[None]:
    """Wrap a task's library call; the time is added to the current flow run's total."""
    from prefect.runtime import flow_run

    started = time.perf_counter()
    try:
        yield
    finally:
        with _LOCK:
            _SECONDS[str(flow_run.id or "")] += time.perf_counter() - started


def library_seconds(flow_run_id: str) -> float:
    with _LOCK:
        return _SECONDS.get(flow_run_id, 0.0)
