"""Human approval in the Prefect UI: a paused flow run shows a form; the reviewer's input resumes it.

Without ``interactive``, decisions come from the approvals file or the step's policy (see
``assay.mrm.approvals``); either way every decision is stored with who made it.
"""

from collections.abc import Collection
from pathlib import Path
from typing import Any

from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from pydantic import Field

from assay.models.base import DomainModel
from assay.models.mrm import Decision
from assay.mrm.approvals import (
    DECISION_MODELS,
    ApprovalsFile,
    DecisionError,
    DecisionStore,
    check_decision,
    decide,
    record_person,
)

REVIEW_TIMEOUT_S = 7 * 24 * 3600


class TopicReview(RunInput):
    """Exclude topics from test generation (ids from the table above)."""

    excluded_topic_ids: list[int] = []
    reviewer: str = Field(min_length=1, description="Your name: the decision is recorded as yours.")


class CaseReview(RunInput):
    """Exclude generated test cases (keys from the table above) before evaluation."""

    excluded_case_keys: list[str] = []
    reviewer: str = Field(min_length=1, description="Your name: the decision is recorded as yours.")


class CalibrationReview(RunInput):
    """Label the sampled answers: item ids you judge as passing, and as failing."""

    passed_item_ids: list[str] = []
    failed_item_ids: list[str] = []
    reviewer: str = Field(min_length=1, description="Your name: the decision is recorded as yours.")


class WeaknessReview(RunInput):
    """Name the weakness each failure cluster shows (cluster id -> name)."""

    names: dict[str, str] = {}
    reviewer: str = Field(min_length=1, description="Your name: the decision is recorded as yours.")


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
    run_id: str,
    interactive: bool,
    approvals: ApprovalsFile | None,
    policy: DomainModel,
    policy_note: str,
    description: str,
    offered: Collection[str],
) -> Decision:
    """Ask the reviewer (pausing the run) or take the file's or policy's decision; resuming the same run
    reuses it. An answer that names what the step did not offer (or no reviewer name) re-opens the form with
    the error shown; it is never stored."""
    store = DecisionStore(out_dir, run_id)
    if not interactive or store.get(step) is not None:
        return decide(step, store, approvals, policy, policy_note, offered)
    form, shown, error = FORMS[step], policy.model_dump(), ""
    while True:
        text = description if not error else f"**Not accepted, please correct:** {error}\n\n{description}"
        answer: Any = pause_flow_run(
            wait_for_input=form.with_initial_data(description=text, **shown), timeout=REVIEW_TIMEOUT_S
        )
        fields = answer.model_dump(exclude={"reviewer", "metadata"})
        chosen = DECISION_MODELS[step].model_validate({key: fields[key] for key in DECISION_MODELS[step].model_fields})
        reviewer = answer.reviewer.strip()
        try:
            if not reviewer:
                raise DecisionError("reviewer: give your name; the decision is recorded as yours")
            check_decision(step, chosen.model_dump(), offered)
        except DecisionError as problem:
            error, shown = str(problem), chosen.model_dump()
            print(f"review {step}: answer not accepted ({error}); the form is open again")
            continue
        return record_person(store, step, chosen.model_dump(), reviewer)
