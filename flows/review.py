"""Human approval in the Prefect UI: a paused flow run shows a form; the reviewer's input resumes it.

Without ``interactive``, decisions come from the approvals file or the step's policy (see
``assay.mrm.approvals``); either way every decision is stored with who made it.
"""

from pathlib import Path
from typing import Any

from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput

from assay.models.base import DomainModel
from assay.models.mrm import Decision
from assay.mrm.approvals import DECISION_MODELS, ApprovalsFile, DecisionStore, decide, record_person

REVIEW_TIMEOUT_S = 7 * 24 * 3600


class TopicReview(RunInput):
    """Exclude topics from test generation (ids from the table above)."""

    excluded_topic_ids: list[int] = []
    reviewer: str = ""


class CaseReview(RunInput):
    """Exclude generated test cases (keys from the table above) before evaluation."""

    excluded_case_keys: list[str] = []
    reviewer: str = ""


class CalibrationReview(RunInput):
    """Label the sampled answers: item ids you judge as passing, and as failing."""

    passed_item_ids: list[str] = []
    failed_item_ids: list[str] = []
    reviewer: str = ""


class WeaknessReview(RunInput):
    """Name the weakness each failure cluster shows (cluster id -> name)."""

    names: dict[str, str] = {}
    reviewer: str = ""


FORMS: dict[str, type[RunInput]] = {
    "topic-modeling": TopicReview,
    "test-validation": CaseReview,
    "calibration": CalibrationReview,
    "failure-clustering": WeaknessReview,
}


def review(
    step: str,
    *,
    out_dir: Path,
    interactive: bool,
    approvals: ApprovalsFile | None,
    policy: DomainModel,
    policy_note: str,
    description: str,
) -> Decision:
    """Ask the reviewer (pausing the run) or take the file's or policy's decision; reruns reuse it."""
    store = DecisionStore(out_dir)
    if not interactive or store.get(step) is not None:
        return decide(step, store, approvals, policy, policy_note)
    form = FORMS[step]
    answer: Any = pause_flow_run(
        wait_for_input=form.with_initial_data(description=description, **policy.model_dump()),
        timeout=REVIEW_TIMEOUT_S,
    )
    fields = answer.model_dump(exclude={"reviewer", "metadata"})
    decision = DECISION_MODELS[step].model_validate({key: fields[key] for key in DECISION_MODELS[step].model_fields})
    return record_person(store, step, decision.model_dump(), getattr(answer, "reviewer", ""))
