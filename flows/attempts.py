"""One Assay run, several Prefect flow runs: every attempt at a run (the first, and each rerun after a kill)
is its own flow run, tagged ``assay-run:<run id>`` so the attempts of a run can be found in the UI and here.

A killed process cannot report its end, so its flow run would stay Running (or Paused at a review) forever.
When an attempt starts, the earlier attempts of the same run that never finished are therefore marked
Crashed: the new attempt supersedes them.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import StateType
from prefect.runtime import flow_run
from prefect.states import Crashed

from assay.config import load_settings
from assay.storage.factory import open_object_store, open_signer
from assay.storage.runs import RunRecord, RunStates, export_folder

RUN_TAG_PREFIX = "assay-run:"
SUPERSEDED = "superseded by a resumed attempt"
UNFINISHED = [StateType.PENDING, StateType.RUNNING, StateType.PAUSED]


def run_tag(run_id: str) -> str:
    return f"{RUN_TAG_PREFIX}{run_id}"


def claim_run(run_id: str) -> list[UUID]:
    """Tag the current flow run with ``run_id`` and mark the earlier unfinished attempts of that run Crashed;
    returns their ids. Outside a flow run there is nothing to tag and nothing is changed."""
    current = flow_run.id
    if not current:
        return []
    tag = run_tag(run_id)
    with get_client(sync_client=True) as client:
        this_run = client.read_flow_run(UUID(current))
        client.update_flow_run(this_run.id, tags=sorted({*this_run.tags, tag}))
        unfinished = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[tag]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=UNFINISHED)),
            ),
            limit=200,
        )
        superseded = [run.id for run in unfinished if run.id != this_run.id]
        for run_id_to_close in superseded:
            client.set_flow_run_state(run_id_to_close, Crashed(message=SUPERSEDED), force=True)
    return superseded


@dataclass
class OpenRun:
    """The Assay run this attempt works on: its state record, its export folder and the store of run states."""

    record: RunRecord
    out_dir: Path
    states: RunStates

    @property
    def id(self) -> str:
        return self.record.run_id

    def finish(self) -> None:
        """Mark the run complete: a rerun of the same inputs then starts a new run."""
        self.record = self.states.finish(self.record)


def open_run(
    *,
    workflow: str,
    inputs_fingerprint: str,
    run_id: str | None,
    out: str | None,
    parameters: dict[str, Any],
    fingerprints: dict[str, str],
) -> OpenRun:
    """The run lifecycle's start, the same for every workflow: continue the unfinished run of the same inputs
    (or ``run_id``) or start one, fix its export folder, and claim it for this flow run (earlier unfinished
    attempts are marked Crashed, and said so)."""
    settings = load_settings()
    states = RunStates(open_object_store(settings), open_signer(settings))
    record = states.start(
        inputs_fingerprint, run_id, workflow=workflow, parameters=parameters, fingerprints=fingerprints
    )
    out_dir = export_folder(out, record.run_id, settings.home)
    record = states.exported_to(record, str(out_dir))
    if superseded := claim_run(record.run_id):
        print(f"run {record.run_id}: marked {len(superseded)} unfinished earlier attempt(s) as crashed")
    return OpenRun(record, out_dir, states)
