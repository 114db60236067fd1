"""Approved baselines: only a completed run, approved by a named person, with its history kept; a pinned run
id is recorded as a deployment parameter, never as a person."""

import pytest
from typer.testing import CliRunner

from assay.baselines import Baselines, pinned
from assay.storage.local import LocalObjectStore
from assay.storage.runs import RunStates


@pytest.fixture
def store(tmp_path):  # type: ignore[no-untyped-def]
    return LocalObjectStore(tmp_path / "store")


def _completed_run(store, label: str) -> str:  # type: ignore[no-untyped-def]
    runs = RunStates(store)
    return runs.finish(runs.start(label * 8, workflow="evaluate")).run_id


def test_a_person_approves_a_completed_run_and_the_previous_one_is_kept(store) -> None:  # type: ignore[no-untyped-def]
    first, second = _completed_run(store, "a"), _completed_run(store, "b")
    baselines = Baselines(store)
    assert baselines.get("weekly") is None
    baselines.approve("weekly", first, "  Ana   Lima ", note="go-live")
    approval = baselines.approve("weekly", second, "Bo")
    assert (approval.run_id, approval.approved_by, approval.source) == (second, "Bo", "person")
    assert baselines.get("weekly") == approval
    assert [(a.run_id, a.approved_by, a.note) for a in baselines.history("weekly")] == [
        (first, "Ana Lima", "go-live"),
        (second, "Bo", ""),
    ]


def test_unknown_running_or_unnamed_approvals_are_refused(store) -> None:  # type: ignore[no-untyped-def]
    baselines = Baselines(store)
    running = RunStates(store).start("c" * 64, workflow="evaluate").run_id
    with pytest.raises(ValueError, match="unknown"):
        baselines.approve("weekly", "no-such-run", "Ana")
    with pytest.raises(ValueError, match="running: only a completed run"):
        baselines.approve("weekly", running, "Ana")
    with pytest.raises(ValueError, match="name is required"):
        baselines.approve("weekly", _completed_run(store, "d"), "   ")
    with pytest.raises(ValueError, match="baseline name"):
        baselines.get("../etc")
    assert baselines.get("weekly") is None


def test_a_run_whose_revalidation_failed_is_approved_only_with_a_reason_kept_with_it(store) -> None:  # type: ignore[no-untyped-def]
    run_id, baselines = _completed_run(store, "e"), Baselines(store)
    for verdict in ("fail", "not comparable"):
        with pytest.raises(ValueError, match=f"verdict is '{verdict}'; approving it as the baseline needs the"):
            baselines.approve("weekly", run_id, "Ana", run_verdict=verdict, failed_run_reason=" \n ")
    assert baselines.get("weekly") is None
    approval = baselines.approve("weekly", run_id, "Ana", run_verdict="fail", failed_run_reason=" index rebuilt ")
    assert (approval.run_verdict, approval.failed_run_reason) == ("fail", "index rebuilt")
    assert baselines.get("weekly") == approval
    assert baselines.approve("weekly", run_id, "Ana", run_verdict="pass").failed_run_reason == ""


def test_a_pinned_baseline_says_it_came_from_the_deployment() -> None:
    approval = pinned("weekly", "run-1")
    assert (approval.approved_by, approval.source) == ("deployment parameter", "deployment parameter")


def test_cli_approve_and_show(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from assay.apps.cli.main import app

    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    store = LocalObjectStore(tmp_path / "home" / "store")
    run_id = _completed_run(store, "e")
    runner = CliRunner()
    shown = runner.invoke(app, ["baseline", "show", "weekly"])
    assert shown.exit_code == 1 and "no approved baseline" in shown.output
    approved = runner.invoke(app, ["baseline", "approve", run_id, "--name", "weekly", "--by", "Ana"])
    assert approved.exit_code == 0, approved.output
    assert f"run {run_id}, approved by Ana" in approved.output
    refused = runner.invoke(app, ["baseline", "approve", "nope", "--name", "weekly", "--by", "Ana"])
    assert refused.exit_code == 2 and "unknown" in refused.output
    shown = runner.invoke(app, ["baseline", "show", "weekly"])
    assert shown.exit_code == 0 and f"current: run {run_id}, approved by Ana" in shown.output
