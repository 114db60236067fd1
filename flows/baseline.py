"""Approve a baseline from the Prefect UI: the run to approve is checked, then the flow pauses with a form that
shows what is being approved (the run's own re-validation verdict, the run, its workflow and dates, the baseline
it replaces) and asks for a decision and the approver's name, and, for a run whose re-validation failed, why it
is approved all the same; an approval is recorded under that name, "via prefect-ui", as ``assay baseline
approve RUN --by NAME`` records one from the command line, with the run's verdict and that reason."""

from typing import Any, Literal

from assay.flows.review import pause_for_form
from assay.flows.review_forms import REFUSED, REVIEWER_HELP, REVIEWER_TITLE
from assay.tasks.revalidate import approve_baseline, baseline_candidate
from prefect import flow
from prefect.input import RunInput
from pydantic import Field, create_model

from assay.escaping import for_field_description
from assay.models.revalidation import BaselineCandidate
from assay.models.workflow import RUN_DEFAULTS
from assay.names import person_name

APPROVE = "approve this run as the baseline"
DECLINE = "do not approve"
REASON_TITLE = "Why approve a run whose re-validation failed?"
REASON_HELP = "Required to approve this run (its verdict is in the first field); recorded with the approval."


@flow(name="approve-baseline", log_prints=True, persist_result=False)
def approve_baseline_flow(
    run_id: str | None = None, name: str = RUN_DEFAULTS.revalidation_name, note: str = ""
) -> dict[str, Any]:
    """Approve a completed run as the baseline a re-validation is compared with. The run pauses for the
    approver's decision and name (and, for a run whose re-validation failed, the reason to approve it).

    Args:
        run_id: The completed run to approve: a run of this store, by its id (assay artifacts list shows runs).
            Required: empty, an unknown run or one not completed fails the flow run before the pause.
        name: The re-validation it becomes the baseline of: the name of its runs (revalidation,
            production-revalidation...).
        note: Why it is approved (kept with the approval); optional.
    """
    run_id = (run_id or "").strip()
    if not run_id:
        raise ValueError("run_id: give the id of the completed run to approve (assay artifacts list shows runs)")
    candidate = baseline_candidate(run_id, name)
    decision, approver, reason = _decided(candidate, name)
    if decision != APPROVE:
        print(f"baseline {name}: {approver} did not approve run {run_id}; the baseline is unchanged")
        return {"approved": False, "declined_by": approver, "run_id": run_id, "name": name}
    approval = approve_baseline(name, run_id, approver, note, candidate, reason)
    overridden = f"; its failed verdict approved all the same because: {reason}" if reason else ""
    print(f"baseline {name}: run {run_id} approved by {approver} via prefect-ui{overridden}")
    return {"approved": True, **approval.model_dump(mode="json")}


def _decided(candidate: BaselineCandidate, name: str) -> tuple[str, str, str]:
    """(decision, approver, reason) once acceptable; a refused answer re-opens the form with the reasons first
    and the answers kept, as the review's forms do."""
    kept: dict[str, str] = {}
    error = ""
    while True:
        answer: Any = pause_for_form(approval_form(candidate, error, kept), f"baseline-{name}")
        kept = {key: str(value) for key, value in answer.model_dump(exclude={"metadata"}).items()}
        approver, reason = person_name(answer.approver), person_name(kept.get("reason", ""))
        problems = []
        if not approver:
            problems.append(f"{REVIEWER_TITLE}: give your name (blank, spaces or invisible characters are not a "
                            "name); the approval is recorded under it")  # fmt: skip
        if answer.decision == APPROVE and candidate.failed and not reason:
            problems.append(f"{REASON_TITLE} The run's re-validation failed: say why it should be the baseline, "
                            f"or choose '{DECLINE}'")  # fmt: skip
        if not problems:
            return answer.decision, approver, reason if candidate.failed else ""
        error = " / ".join(problems)
        print(f"baseline {name}: answer not accepted ({error}); the form is open again")


def approval_form(candidate: BaselineCandidate, error: str = "", kept: dict[str, str] | None = None) -> type[RunInput]:
    """The decision (starting at 'do not approve': nothing is approved by a click on Submit alone), the reason
    to approve a failed run (only for one), and the name. What is approved, the run's verdict first, is in the
    decision field's description, which both Prefect UIs draw (the pause's own description V1 draws 0 px high);
    ``candidate``'s values are escaped for it. ``kept``: the answers of a refused form, shown again."""
    kept = kept or {}
    escaped = {label: for_field_description(value) for label, value in candidate.facts.items()}
    facts = [REFUSED + for_field_description(error)] if error else []
    facts += [f"{label}: {value}" for label, value in escaped.items()]
    title = f"Approve run {escaped['Run']} as the baseline?" + (" Its re-validation FAILED." * candidate.failed)
    decision = kept.get("decision") if kept.get("decision") in (DECLINE, APPROVE) else DECLINE
    fields: dict[str, Any] = {
        "decision": (Literal[DECLINE, APPROVE], Field(decision, title=title, description="\n\n".join(facts)))
    }
    if candidate.failed:
        fields["reason"] = (str, Field(kept.get("reason", ""), title=REASON_TITLE, description=REASON_HELP))
    name = person_name(kept.get("approver", ""))
    fields["approver"] = (
        str,
        Field(name, title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1)
        if name
        else Field(title=REVIEWER_TITLE, description=REVIEWER_HELP, min_length=1),
    )
    model = create_model("BaselineApproval", __base__=RunInput, **fields)
    return model.with_initial_data(description=f"### Approve a baseline\n{'  '.join(facts)}")
