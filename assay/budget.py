"""A per-check time budget (the live guardrail's), enforced cooperatively: Python cannot stop a thread, so the
expensive steps (each embedding batch, each evaluator, each claim an evaluator checks) ask ``spend`` first, and
the first one past the deadline raises. It sits below the evaluators so that they can ask it too.

The deadline lives in a context variable, so concurrent checks in the service's thread pool each see their
own, and code that runs outside a check (a validation run) never sees one."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


class TimeBudgetExceeded(RuntimeError):
    """The check ran past its budget and was stopped; its partial result must not be used as a verdict."""


@dataclass
class _Budget:
    seconds: float
    deadline: float
    exceeded: bool = False


_current: ContextVar[_Budget | None] = ContextVar("guardrail_time_budget", default=None)


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Run the block under a budget of ``seconds`` (None: no budget); raises ``TimeBudgetExceeded`` at the end
    when a step inside was stopped, even if an evaluator caught the error and recorded it as unscored."""
    if seconds is None:
        yield
        return
    budget = _Budget(seconds=seconds, deadline=time.monotonic() + seconds)
    token = _current.set(budget)
    try:
        yield
    finally:
        _current.reset(token)
    if budget.exceeded:
        raise _exceeded(budget)


def spend() -> None:
    """Raise ``TimeBudgetExceeded`` when the current check is past its deadline (a no-op outside a budget)."""
    budget = _current.get()
    if budget is not None and (budget.exceeded or time.monotonic() > budget.deadline):
        budget.exceeded = True
        raise _exceeded(budget)


def _exceeded(budget: _Budget) -> TimeBudgetExceeded:
    return TimeBudgetExceeded(f"the check ran past its time budget of {budget.seconds:g} s and was stopped")
