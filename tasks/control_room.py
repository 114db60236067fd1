"""The Prefect UI as the MRM run's control room: each step's summary and tables as artifacts, and a progress bar
for the long steps.

Keys are stable across runs (``mrm-<step>-summary``, ``mrm-<step>-<table>``, ``mrm-<step>-progress``), so the
UI's Artifacts page shows the history of each one run after run; the run itself is named in the description.
Publishing is not cached: a resumed run serves its steps from cache but still shows their summaries."""

import math
import re
import time
from collections.abc import Callable
from types import TracebackType
from uuid import UUID

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

from artifacts.step_summaries import StepSummary
from artifacts.workflow_report import STEP_TITLES
from assay.escaping import for_markdown_text

KEY_PREFIX = "mrm"
PROGRESS_INTERVAL_S = 1.0
_NOT_IN_KEY = re.compile(r"[^a-z0-9]+")


def prefect_key(*parts: str) -> str:
    """Lowercase letters, digits and dashes: the only characters Prefect accepts in an artifact key."""
    return "-".join(p for p in (_NOT_IN_KEY.sub("-", part.lower()).strip("-") for part in parts) if p)


def artifact_key(step: str, name: str) -> str:
    """``mrm-<step>-<name>`` in the only characters Prefect accepts in a key: lowercase letters, digits, dashes."""
    return prefect_key(KEY_PREFIX, step, name)


def _description(step: str, what: str, run_label: str) -> str:
    """Descriptions render as Markdown in the UI; the run label may hold a user-chosen name."""
    return f"{STEP_TITLES.get(step, step)}: {what} (run {for_markdown_text(run_label)})"


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
    """A progress bar of one step in the UI, fed fractions done (0..1): ``StepProgress(step)(0.25)``.

    The first call creates the artifact, later ones update it at most once per ``interval_s`` (the server is
    not flooded by a fast loop), except 100% which is always written. As a context manager it shows 0% on
    entry and 100% on a normal exit, even when the work never reported its last fraction. Outside a flow or
    task run it does nothing, so library code can be called with it from a notebook or a unit test.
    A failed update is logged and the step goes on: a progress bar is never worth a failed step."""

    def __init__(
        self, step: str, *, interval_s: float = PROGRESS_INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.key = artifact_key(step, "progress")
        self.step = step
        self.active = FlowRunContext.get() is not None or TaskRunContext.get() is not None
        self.artifact_id: UUID | None = None
        self.shown: float | None = None
        self._interval_s = interval_s
        self._clock = clock
        self._shown_at = -math.inf

    def __call__(self, fraction: float) -> None:
        if not self.active:
            return
        percent = round(100.0 * min(max(float(fraction), 0.0), 1.0), 1)
        now = self._clock()
        if percent == self.shown or (percent < 100.0 and now - self._shown_at < self._interval_s):
            return
        try:
            if self.artifact_id is None:
                description = f"{STEP_TITLES.get(self.step, self.step)}: progress"
                self.artifact_id = create_progress_artifact(percent, key=self.key, description=description, _sync=True)
            else:
                update_progress_artifact(self.artifact_id, percent, _sync=True)
        except Exception as error:  # the bar is cosmetic: the step's work must go on
            get_run_logger().warning("could not show the progress of %s: %s", self.step, error)
            return
        self.shown, self._shown_at = percent, now

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


def step_progress(step: str) -> StepProgress:
    """The progress callback of a long step (``model_topics(..., progress=step_progress("topic-modeling"))``),
    also usable as ``with step_progress(step) as progress:`` to end at 100% when the step finishes."""
    return StepProgress(step)
