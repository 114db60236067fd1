"""The Prefect UI as the MRM run's control room: each step's summary and tables as artifacts, and a progress bar
for the long steps.

Keys are stable across runs (``mrm-<n>-<step>-summary``, ``-<table>``, ``-progress``; ``n`` numbers the steps in
workflow order), so the UI's Artifacts page lists them in order and shows the history of each one run after
run; the run itself is named in the description.
Publishing is not cached: a resumed run serves its steps from cache but still shows their summaries."""

import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from uuid import UUID

from assay.artifacts.step_summaries import StepSummary
from assay.tasks.timing import current_step
from prefect import task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext, TaskRunContext
from prefect.logging import get_run_logger

from assay.escaping import for_markdown_text
from assay.models.steps import Step, step_title

KEY_PREFIX = "mrm"
PROGRESS_INTERVAL_S = 1.0
_NOT_IN_KEY = re.compile(r"[^a-z0-9]+")
_STEP_NUMBERS = {step.value: str(step.number) for step in Step}


def prefect_key(*parts: str) -> str:
    """Lowercase letters, digits and dashes: the only characters Prefect accepts in an artifact key."""
    return "-".join(p for p in (_NOT_IN_KEY.sub("-", part.lower()).strip("-") for part in parts) if p)


def artifact_key(step: str, name: str) -> str:
    """``mrm-<n>-<step>-<name>`` (``n``: the step's number in the workflow, so the Artifacts page lists the
    steps in order) in the only characters Prefect accepts in a key: lowercase letters, digits, dashes. A name
    outside the nine steps has no number."""
    return prefect_key(KEY_PREFIX, _STEP_NUMBERS.get(prefect_key(step), ""), step, name)


def _description(step: str, what: str, run_label: str) -> str:
    """Descriptions render as Markdown in the UI; the run label may hold a user-chosen name."""
    return f"{step_title(step)}: {what} (run {for_markdown_text(run_label)})"


@task(name="publish-step-summary", task_run_name="summary-{step}", cache_policy=NO_CACHE, persist_result=False)
def publish_step_summary(step: str, summary: StepSummary, run_label: str) -> list[str]:
    """One Markdown artifact and one table artifact per table of a finished step; returns their keys.
    The summary is built by the caller from outputs it already holds: nothing is recomputed here."""
    key = artifact_key(step, "summary")
    create_markdown_artifact(
        markdown=summary.markdown, key=key, description=_description(step, "summary", run_label), _sync=True
    )
    keys = [key]
    for name, rows in summary.tables.items():
        key = artifact_key(step, name)
        create_table_artifact(table=rows, key=key, description=_description(step, name, run_label), _sync=True)
        keys.append(key)
    return keys


class StepProgress:
    """The progress bar of one step in the UI, fed fractions done (0..1): ``StepProgress(step)(0.25)``.

    One artifact per step and flow run, whichever task runs feed it: ``part(start, end)`` is the bar seen by
    one part of the step (its 0..1 mapped to ``start..end``), and the flow gives the tasks it runs a part
    with :func:`progress_part`. The first report creates the artifact; later ones update it, never backwards,
    at most once per ``interval_s`` (a fast loop does not flood the server) except when the bar passes a
    tenth or reaches 100%, which are always written: the bar lags what it was told by less than 10%. As a
    context manager it shows the part's start on entry and its end on a normal exit, even when the work
    never reported its last fraction. Outside a flow or task run it does nothing, so library code can be
    called with it from a notebook or a unit test. A failed update is logged and the step goes on: a
    progress bar is never worth a failed step."""

    def __init__(
        self,
        step: str | None,
        *,
        start: float = 0.0,
        end: float = 1.0,
        interval_s: float = PROGRESS_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.step = step
        self.key = artifact_key(step, "progress") if step else None
        self.start, self.end = start, end
        run = _run_id()
        self.active = step is not None and run is not None
        self._bar = _BARS.setdefault((run, self.key or ""), _Bar()) if self.active else _Bar()
        self._interval_s = interval_s
        self._clock = clock

    @property
    def artifact_id(self) -> UUID | None:
        return self._bar.artifact_id

    @property
    def shown(self) -> float | None:
        """The percentage the UI shows, None before the first report."""
        return self._bar.shown

    @property
    def fraction(self) -> float:
        """Where the whole bar stands (0..1): a part that follows others starts there."""
        return (self._bar.shown or 0.0) / 100.0

    def part(self, start: float, end: float) -> "StepProgress":
        """The same bar seen by a part of this one's work: its 0..1 is mapped to ``start..end`` of this range."""
        start, end = _within((self.start, self.end), start, end)
        return StepProgress(self.step, start=start, end=end, interval_s=self._interval_s, clock=self._clock)

    def __call__(self, fraction: float) -> None:
        if not self.active:
            return
        bar = self._bar
        done = self.start + (self.end - self.start) * min(max(float(fraction), 0.0), 1.0)
        percent = round(100.0 * done, 1)
        now = self._clock()
        if bar.shown is not None and percent <= bar.shown:
            return
        tenth_passed = bar.shown is None or percent // 10 > bar.shown // 10
        if not tenth_passed and now - bar.shown_at < self._interval_s:
            return
        try:
            if bar.artifact_id is None:
                description = f"{step_title(self.step or '')}: progress"
                bar.artifact_id = create_progress_artifact(percent, key=self.key, description=description, _sync=True)
            else:
                update_progress_artifact(bar.artifact_id, percent, _sync=True)
        except Exception as error:  # the bar is cosmetic: the step's work must go on
            get_run_logger().warning("could not show the progress of %s: %s", self.step, error)
            return
        bar.shown, bar.shown_at = percent, now

    def finish(self) -> None:
        self(1.0)

    def __enter__(self) -> "StepProgress":
        self(0.0)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self.finish()


@dataclass
class _Bar:
    """What one step's bar shows in one flow run, shared by the task runs that feed it."""

    artifact_id: UUID | None = None
    shown: float | None = None
    shown_at: float = -math.inf


_BARS: dict[tuple[str | None, str], _Bar] = {}
_PART: ContextVar[tuple[float, float]] = ContextVar("assay_progress_part", default=(0.0, 1.0))


def _run_id() -> str | None:
    """The flow run whose bars a report feeds (a task run's own id when it runs outside a flow); None
    outside any run."""
    task_run = TaskRunContext.get()
    if task_run is not None:
        return str(task_run.task_run.flow_run_id or task_run.task_run.id)
    flow_run = FlowRunContext.get()
    return str(flow_run.flow_run.id) if flow_run is not None and flow_run.flow_run is not None else None


def _within(outer: tuple[float, float], start: float, end: float) -> tuple[float, float]:
    """``start..end`` (fractions of ``outer``) as fractions of the whole bar."""
    low, high = outer
    return low + (high - low) * start, low + (high - low) * end


@contextmanager
def progress_part(start: float, end: float) -> Iterator[None]:
    """Flow side: the tasks run inside feed ``start..end`` of their step's bar (of the enclosing part). A
    context, not a task parameter, so the part never enters a task's cache key."""
    token = _PART.set(_within(_PART.get(), start, end))
    try:
        yield
    finally:
        _PART.reset(token)


def step_progress(step: str | None = None) -> StepProgress:
    """The progress callback of a long step (``model_topics(..., progress=step_progress(Step.TOPIC_MODELING))``),
    also usable as ``with step_progress(step) as progress:`` to end at 100% when the step finishes. Without
    ``step``, the step the flow is in (``tasks.timing.step_scope``); over the part the flow gave
    (:func:`progress_part`), the whole bar by default."""
    start, end = _PART.get()
    return StepProgress(step or current_step(), start=start, end=end)
