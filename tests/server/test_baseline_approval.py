"""A baseline approved from the Prefect UI's pause form, against a real Prefect server: the form shows the run
and the baseline it replaces, starts at "do not approve", refuses a blank name (the form opens again with the
reason first), and records the approval under the approver's name, via prefect-ui; a declined approval changes
nothing; a run that is not complete is refused before any pause; a run whose re-validation failed is shown
failed, with why, in the first field, and is approved only with the approver's reason, kept with the approval."""

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from assay.artifacts.report.run_documents import RunDocuments
from assay.artifacts.revalidation import assess
from assay.flows.baseline import APPROVE, DECLINE, REASON_TITLE, approve_baseline_flow

from assay.baselines import Baselines
from assay.models.revalidation import BaselineApproval
from assay.storage import LocalObjectStore
from assay.storage.runs import RUN_FILE, RunStates
from tests.support.fake_runs import fake_run, write_run
from tests.support.prefect_server import PrefectServer, server_environment

FLOW_CALL = "import json, sys; from flows.baseline import approve_baseline_flow as f; f(**json.loads(sys.argv[1]))"
WAIT_S = 120


@pytest.fixture(scope="module")
def server(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The worker's Prefect server, and a Prefect home of this module's own for the flow processes."""
    return prefect_server.api_url, tmp_path_factory.mktemp("prefect-home")


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
    from prefect.client.schemas.filters import (
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateName,
    )
    from prefect.exceptions import PrefectHTTPStatusError

    # the worker's server is shared with other test files, whose runs may be left paused: only this flow's count
    approval = FlowFilter(name=FlowFilterName(any_=[approve_baseline_flow.name]))
    deadline = time.monotonic() + WAIT_S
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            paused = FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"])))
            runs = [
                run
                for run in client.read_flow_runs(flow_filter=approval, flow_run_filter=paused)
                if run.state.id not in seen
            ]
            if runs:
                run = runs[0]
                try:  # Prefect pauses the run first and writes the form's schema then
                    schema = json.loads(
                        client.read_flow_run_input(run.id, run.state.state_details.run_input_keyset["schema"])
                    )
                except PrefectHTTPStatusError as error:
                    if error.response.status_code != 404:
                        raise
                    time.sleep(0.2)
                    continue
                seen.add(run.state.id)
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


def _failed_revalidation_run(home: Path) -> str:
    """A completed run whose export holds a failed re-validation verdict (a regression against its baseline)."""
    states = RunStates(LocalObjectStore(home / "store"))
    export = home / "exports" / "failed-week"
    record = states.start("failed-week", workflow="evaluate", export=str(export))
    approval = BaselineApproval(name="weekly", run_id="base", approved_by="Ana Lima", source="person",
                                approved_at=datetime.now(UTC))  # fmt: skip
    cases = [f"c{index}" for index in range(6)]
    current = fake_run(record.run_id, {"rag": {case: 0.1 if case < "c3" else 0.9 for case in cases}})
    baseline = (approval, fake_run("base", {"rag": dict.fromkeys(cases, 0.9)}))
    _, documents, _ = assess("weekly", current, baseline=baseline, gates=[], fail_on=None, fail_on_regression=True)
    exported = {**current.documents, **documents, RUN_FILE: {"run_id": record.run_id}}
    write_run(RunDocuments(source="test", documents=exported), export)
    return states.finish(record).run_id


def test_a_failed_run_is_shown_failed_and_approved_only_with_the_approvers_reason(server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings

    run_id = _failed_revalidation_run(tmp_path)
    process = _start(server, tmp_path, run_id=run_id, name="weekly")
    seen: set[str] = set()
    try:
        with temporary_settings({PREFECT_API_URL: server[0]}):
            run, schema = _next_form(process, tmp_path, seen)
            assert list(schema["properties"]) == ["decision", "reason", "approver"]
            decision = schema["properties"]["decision"]
            assert decision["title"] == f"Approve run {run_id} as the baseline? Its re-validation FAILED."
            # the first field's description opens with the verdict and why (V1 draws the pause's own one 0 px high)
            assert decision["description"].startswith("Verdict: FAILED: regression against baseline run base: 1 metric")
            assert schema["properties"]["reason"]["title"] == REASON_TITLE
            resume_flow_run(run.id, run_input={"decision": APPROVE, "approver": "Grace Hopper"})  # no reason: refused
            run, schema = _next_form(process, tmp_path, seen)
            decision = schema["properties"]["decision"]
            assert decision["description"].startswith(f"NOT ACCEPTED, please correct: {REASON_TITLE}")
            assert (decision["default"], schema["properties"]["approver"]["default"]) == (APPROVE, "Grace Hopper")
            reason = "the new index answers differently; the owner accepts it"
            resume_flow_run(run.id, run_input={"decision": APPROVE, "approver": "Grace Hopper", "reason": reason})
        assert process.wait(timeout=WAIT_S) == 0, (tmp_path / "flow.log").read_text()[-3000:]
    finally:
        if process.poll() is None:  # a failed check: its paused run must not be the next test's form
            process.kill()
    approval = Baselines(LocalObjectStore(tmp_path / "store")).get("weekly")
    assert (approval.run_id, approval.approved_by, approval.run_verdict, approval.failed_run_reason) == (
        run_id, "Grace Hopper", "fail", reason
    )  # fmt: skip


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
