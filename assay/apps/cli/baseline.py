"""``assay baseline approve|show``: which run a scheduled re-validation is compared with, approved by a person."""

from typing import Annotated

import typer

from assay.apps.cli.common import command_group, console, user_errors
from assay.escaping import for_terminal
from assay.models.workflow import RUN_DEFAULTS

app = command_group("Approve the baseline run that re-validations are compared with.")


def _baselines():  # type: ignore[no-untyped-def]
    from assay.baselines import Baselines
    from assay.config import load_settings
    from assay.storage.factory import open_object_store

    return Baselines(open_object_store(load_settings()))


@app.command("approve")
def approve(
    run_id: Annotated[str, typer.Argument(help="The completed run to compare later runs with.")],
    by: Annotated[str, typer.Option("--by", help="Your name: the approval is recorded as yours.")],
    name: Annotated[
        str, typer.Option("--name", help="The re-validation it serves (its evaluation name).")
    ] = RUN_DEFAULTS.revalidation_name,
    note: Annotated[str, typer.Option("--note", help="Why this run is the baseline (kept with it).")] = "",
) -> None:
    """Make RUN_ID the approved baseline of NAME; the previous one stays in the history."""
    with user_errors():
        approval = _baselines().approve(name, run_id, by, note)
    console.print(
        f"baseline of {for_terminal(approval.name)}: run {for_terminal(approval.run_id)}, approved by "
        f"{for_terminal(approval.approved_by)} at {approval.approved_at.isoformat(timespec='seconds')}",
        highlight=False,
    )


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The re-validation name.")] = RUN_DEFAULTS.revalidation_name,
) -> None:
    """The approved baseline of NAME and earlier approvals, newest first."""
    with user_errors():
        history = _baselines().history(name)
    if not history:
        console.print(f"no approved baseline for {for_terminal(name)}", highlight=False)
        raise typer.Exit(code=1)
    for index, approval in enumerate(reversed(history)):
        label = "current" if index == 0 else "earlier"
        note = f" ({for_terminal(approval.note)})" if approval.note else ""
        console.print(
            f"{label}: run {for_terminal(approval.run_id)}, approved by {for_terminal(approval.approved_by)} "
            f"at {approval.approved_at.isoformat(timespec='seconds')}{note}",
            highlight=False,
        )
