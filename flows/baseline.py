"""Approve a baseline from the Prefect UI: the run to approve is checked, then the flow pauses with a form that
shows what is being approved (the run, its workflow and dates, the baseline it replaces) and asks for a
decision and the approver's name; an approval is recorded under that name, "via prefect-ui", exactly as
``assay baseline approve RUN --by NAME`` records one from the command line."""

from typing import Any, Literal

from assay.flows.review import pause_for_form
from assay.flows.review_forms import REFUSED, REVIEWER_HELP, REVIEWER_TITLE
from assay.tasks.revalidate import approve_baseline, baseline_candidate
from prefect import flow
from prefect.input import RunInput
from pydantic import Field, create_model

from assay.escaping import for_field_description
from assay.names import person_name

APPROVE = "approve this run as the baseline"
DECLINE = "do not approve"


@flow(name="approve-baseline", log_prints=True, persist_result=False)
def approve_baseline_flow(run_id: str | None = None, name: str = "revalidation", note: str = "") -> dict[str, Any]:
    """``run_id``: a completed run of this store (``assay artifacts list`` shows runs); ``name``: the
    re-validation it becomes the baseline of; ``note``: why (kept with the approval). The run pauses for the
    approver's decision and name."""
    run_id = (run_id or "").strip()
    if not run_id:
        raise ValueError("run_id: give the id of the completed run to approve (assay artifacts list shows runs)")
    shown = baseline_candidate(run_id, name)
    error = ""
    while True:
        answer: Any = pause_for_form(approval_form(shown, error), f"baseline-{name}")
        approver = person_name(answer.approver)
        if approver:
            break
        error = (
            f"{REVIEWER_TITLE}: give your name (blank, spaces or invisible characters are not a name); the approval "
            "is recorded under it"
        )
        print(f"baseline {name}: answer not accepted ({error}); the form is open again")
    if answer.decision != APPROVE:
        print(f"baseline {name}: {approver} did not approve run {run_id}; the baseline is unchanged")
        return {"approved": False, "declined_by": approver, "run_id": run_id, "name": name}
    approval = approve_baseline(name, run_id, approver, note)
    print(f"baseline {name}: run {run_id} approved by {approver} via prefect-ui")
    return {"approved": True, **approval.model_dump(mode="json")}


def approval_form(shown: dict[str, str], error: str = "") -> type[RunInput]:
    """The decision (starting at 'do not approve': nothing is approved by a click on Submit alone) and the name.
    What is approved is in the decision field's description, which both Prefect UIs draw (``shown``'s values
    escaped for it)."""
    escaped = {label: for_field_description(value) for label, value in shown.items()}
    facts = [REFUSED + error] if error else []
    facts += [f"{label}: {value}" for label, value in escaped.items()]
    model = create_model(
        "BaselineApproval",
        __base__=RunInput,
        decision=(
            Literal[DECLINE, APPROVE],
            Field(DECLINE, title=f"Approve run {escaped['Run']} as the baseline?", description="\n\n".join(facts)),
        ),
        approver=(str, Field(title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1)),
    )
    return model.with_initial_data(description=f"### Approve a baseline\n{'  '.join(facts)}")
