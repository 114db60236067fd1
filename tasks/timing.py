"""Seconds spent in library code per flow run (and per workflow step), so a flow can report how much of its
wall time is Prefect's and what each step computed for."""

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_SECONDS: dict[str, float] = defaultdict(float)
_STEP_SECONDS: dict[tuple[str, str], float] = defaultdict(float)
_LOCK = threading.Lock()
_STEP: ContextVar[str | None] = ContextVar("assay_step", default=None)


@contextmanager
def step_scope(step: str) -> Iterator[None]:
    """Attribute the library time of the tasks run inside to ``step``."""
    token = _STEP.set(step)
    try:
        yield
    finally:
        _STEP.reset(token)


def current_step() -> str | None:
    """The workflow step the caller runs in (a task run inherits its flow's), None outside any."""
    return _STEP.get()


@contextmanager
def library_time() -> Iterator[None]:
    """Wrap a task's library call; the time is added to the current flow run's total."""
    from prefect.runtime import flow_run

    started = time.perf_counter()
    step = _STEP.get()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        run = str(flow_run.id or "")
        with _LOCK:
            _SECONDS[run] += elapsed
            if step is not None:
                _STEP_SECONDS[run, step] += elapsed


def library_seconds(flow_run_id: str) -> float:
    with _LOCK:
        return _SECONDS.get(flow_run_id, 0.0)


def step_library_seconds(flow_run_id: str) -> dict[str, float]:
    """Library seconds per step of this flow run (this attempt only)."""
    with _LOCK:
        return {step: seconds for (run, step), seconds in _STEP_SECONDS.items() if run == flow_run_id}
