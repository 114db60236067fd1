"""A baseline approved from the Prefect UI's pause form, against a real Prefect server: the form shows the run
and the baseline it replaces, starts at "do not approve", refuses a blank name (the form opens again with the
reason first), and records the approval under the approver's name, via prefect-ui; a declined approval changes
nothing; a run that is not complete is refused before any pause."""

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.flows.baseline import APPROVE, DECLINE

from assay.baselines import Baselines
from assay.storage import LocalObjectStore
from assay.storage.runs import RunStates
from tests.support.prefect_server import running_prefect_server, server_environment

FLOW_CALL = "import json, sys; from flows.baseline import approve_baseline_flow as f; f(**json.loads(sys.argv[1]))"
WAIT_S = 120


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    home = tmp_path_factory.mktemp("prefect-home")
    with running_prefect_server(home) as api_url:
        yield api_url, home


def _completed_run(home: Path, label: str) -> str:
    states = RunStates(LocalObjectStore(home / "store"))
    record = states.start(label, workflow="evaluate", export=f"/exports/{label}")
    return states.finish(record).run_id


def _start(server: tuple[str, Path], home: Path, **parameters: object) -> subprocess.Popen:
    env = server_environment(server[1], server[0])
    env["ASSAY_HOME"] = str(home)
    log = open(home / "flow.log", "ab")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, "-c", FLOW_CALL, json.dumps(parameters)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).parents[2],
    )


def _next_form(process: subprocess.Popen, home: Path, seen: set[str]) -> tuple[object, dict]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateName

    deadline = time.monotonic() + WAIT_S
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            paused = FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"])))
            runs = [run for run in client.read_flow_runs(flow_run_filter=paused) if run.state.id not in seen]
            if runs:
                run = runs[0]
                seen.add(run.state.id)
                schema = json.loads(
                    client.read_flow_run_input(run.id, run.state.state_details.run_input_keyset["schema"])
                )
                return run, schema
            assert process.poll() is None, (home / "flow.log").read_text()[-3000:]
            time.sleep(0.5)
    raise AssertionError(f"no pause within {WAIT_S} s:\n{(home / 'flow.log').read_text()[-3000:]}")


def test_a_baseline_is_approved_in_the_form_under_the_approvers_name(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings

    first, second = _completed_run(tmp_path, "first"), _completed_run(tmp_path, "second")
    Baselines(LocalObjectStore(tmp_path / "store")).approve("nightly", first, "Ana Lima", via="command line")
    process = _start(server, tmp_path, run_id=second, name="nightly", note="after the index rebuild")
    seen: set[str] = set()
    with temporary_settings({PREFECT_API_URL: server[0]}):
        run, schema = _next_form(process, tmp_path, seen)
        decision = schema["properties"]["decision"]
        assert decision["default"] == DECLINE and decision["enum"] == [DECLINE, APPROVE]
        assert decision["title"] == f"Approve run {second} as the baseline?"
        for shown in (
            f"Run: {second}",
            "Re-validation: nightly",
            "Workflow: evaluate",
            f"Replaces: run {first}, approved by Ana Lima",
        ):
            assert shown in decision["description"]
        resume_flow_run(run.id, run_input={"decision": APPROVE, "approver": "  "})  # blank: refused
        run, schema = _next_form(process, tmp_path, seen)
        assert schema["properties"]["decision"]["description"].startswith("NOT ACCEPTED, please correct: Your name")
        resume_flow_run(run.id, run_input={"decision": APPROVE, "approver": "Grace  Hopper"})
    assert process.wait(timeout=WAIT_S) == 0, (tmp_path / "flow.log").read_text()[-3000:]
    approval = Baselines(LocalObjectStore(tmp_path / "store")).get("nightly")
    assert (approval.run_id, approval.approved_by, approval.source, approval.via) == (
        second, "Grace Hopper", "person", "prefect-ui"
    )  # fmt: skip
    assert approval.note == "after the index rebuild"
    assert [earlier.run_id for earlier in Baselines(LocalObjectStore(tmp_path / "store")).history("nightly")] == [
        first, second
    ]  # fmt: skip


def test_a_declined_approval_changes_nothing_and_an_unfinished_run_is_refused(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings

    run_id = _completed_run(tmp_path, "declined")
    process = _start(server, tmp_path, run_id=run_id, name="weekly")
    with temporary_settings({PREFECT_API_URL: server[0]}):
        run, _ = _next_form(process, tmp_path, set())
        resume_flow_run(run.id, run_input={"approver": "Bo"})  # Submit left at "do not approve"
    assert process.wait(timeout=WAIT_S) == 0
    assert Baselines(LocalObjectStore(tmp_path / "store")).get("weekly") is None

    unfinished = RunStates(LocalObjectStore(tmp_path / "store")).start("open", workflow="evaluate").run_id
    refused = _start(server, tmp_path, run_id=unfinished, name="weekly")
    assert refused.wait(timeout=WAIT_S) != 0
    assert (
        f"run {unfinished!r} is running: only a completed run can be a baseline" in (tmp_path / "flow.log").read_text()
    )


def test_a_run_killed_at_its_form_and_retried_asks_again_and_completes(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Prefect's Retry button after a crash: the same flow run, executed again by a new process, must open its
    form again (before, the new process numbered its first pause 1 again and failed with 409 writing it)."""
    from prefect.client.orchestration import get_client
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.states import Crashed, Scheduled

    run_id = _completed_run(tmp_path, "retried")
    process = _start(server, tmp_path, run_id=run_id, name="after-crash")
    seen: set[str] = set()
    with temporary_settings({PREFECT_API_URL: server[0]}):
        run, _ = _next_form(process, tmp_path, seen)
        process.kill()
        process.wait(timeout=WAIT_S)
        with get_client(sync_client=True) as client:  # what the runner and then the UI's Retry button do
            client.set_flow_run_state(run.id, Crashed(message="killed"), force=True)
            client.set_flow_run_state(run.id, Scheduled(name="AwaitingRetry", message="Retry from the UI"), force=True)
        retried = _execute_again(server, tmp_path, run.id)
        again, schema = _next_form(retried, tmp_path, seen)
        assert (
            again.id == run.id and schema["properties"]["decision"]["title"] == f"Approve run {run_id} as the baseline?"
        )
        resume_flow_run(run.id, run_input={"decision": APPROVE, "approver": "Lin Wei"})
        assert retried.wait(timeout=WAIT_S) == 0, (tmp_path / "flow.log").read_text()[-3000:]
        with get_client(sync_client=True) as client:
            assert client.read_flow_run(run.id).state.is_completed()
    approval = Baselines(LocalObjectStore(tmp_path / "store")).get("after-crash")
    assert (approval.run_id, approval.approved_by) == (run_id, "Lin Wei")


def _execute_again(server: tuple[str, Path], home: Path, flow_run_id: object) -> subprocess.Popen:
    """Run an existing flow run in a new process, as a worker does after Retry."""
    env = server_environment(server[1], server[0]) | {"ASSAY_HOME": str(home), "PREFECT__FLOW_RUN_ID": str(flow_run_id)}
    log = open(home / "flow.log", "ab")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, "-m", "prefect.flow_engine", "flows/baseline.py:approve_baseline_flow"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).parents[2],
    )
