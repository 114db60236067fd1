"""The evaluate deployment on Dask as a Prefect UI user runs it: served by ``python -m assay.deployments.serve`` on a
real Prefect server; a person opens the deployment's Custom run form in chromium, types the suite, host and
evaluator, sets ``dask_workers`` to 2 and ``shard_size`` to 2, and submits it (a plain run and one with a bad
scheduler address are started through the API beside it). The Dask run's scores equal the unsharded run's,
its shard tasks ran on the two workers of the local cluster the run started (inside the ``evaluate-shards``
subflow), its log says what chose Dask, and a bad Dask parameter fails the run with the check's message.
Also the choice itself: parameter, then setting, then the default."""

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from assay.deployments.definitions import load_deployments
from assay.flows.scale_out import choose_scale_out

from assay.corpora import sample_data_path
from assay.models import TestSuite
from assay.testing.processes import stop_group
from tests.support.browser import (
    chromium_page,
    run_form_field,
    skip_without_chromium,
    toggle_choices,
    v2_choices_trigger,
)
from tests.support.prefect_server import log_tail, run_created_by_form, wait_for_final_state

pytest.importorskip("distributed")
pytest.importorskip("prefect_dask")

EVALUATORS = ["text_matching"]
BAD_ADDRESS = "http://scheduler"


def small_suite(folder: Path) -> Path:
    """Six cases of the sample suite: three shards of two."""
    suite = TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())
    suite.tests = suite.tests[:2]
    for test in suite.tests:
        test.test_cases = test.test_cases[:3]
    path = folder / "suite.json"
    path.write_text(suite.model_dump_json())
    return path


def test_served_evaluate_deployment_runs_its_shards_on_dask(
    server: tuple[str, dict[str, str]], client: Any, tmp_path: Path
) -> None:
    skip_without_chromium()
    out_root = tmp_path / "exports"
    log_path = tmp_path / "serve.log"
    common = {"suite": str(small_suite(tmp_path)), "hosts": ["sample-rag-keyword"], "evaluators": EVALUATORS}
    through_the_api = {
        "plain": {**common, "run_id": "plain", "dask_workers": 0},
        "bad": {**common, "run_id": "bad", "dask_address": BAD_ADDRESS},
    }
    with open(log_path, "wb") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "assay.deployments.serve", "--deployment", "evaluate", "--out", "exports",
             "--replace"],
            env={**server[1], "PREFECT_RUNNER_POLL_FREQUENCY": "1", "PREFECT_LOGGING_LEVEL": "INFO"},  # logs to the API
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deployment = _wait_for_deployment(client, serve, log_path)
        runs = {name: client.create_flow_run_from_deployment(deployment.id, parameters=parameters)
                for name, parameters in through_the_api.items()}  # fmt: skip
        form = _submit_in_the_run_form(server[0], deployment.id, common, deployment.parameters)
        runs["dask"] = client.read_flow_run(UUID(form))
        typed = {**common, "run_id": "dask", "dask_workers": 2, "shard_size": 2}
        assert {key: runs["dask"].parameters.get(key) for key in typed} == typed, runs["dask"].parameters
        states = {name: wait_for_final_state(client, run.id, serve, log_path) for name, run in runs.items()}
    finally:
        stop_group(serve)

    for name in ("plain", "dask"):
        assert states[name].is_completed(), f"{name}: {states[name].type}: {states[name].message}\n{log_tail(log_path)}"
    assert states["bad"].is_failed()
    assert f"dask_address {BAD_ADDRESS!r} is not a scheduler address" in str(states["bad"].message)

    for evaluator_id in EVALUATORS:
        assert _scores(out_root / "evaluate" / "dask", evaluator_id) == _scores(
            out_root / "evaluate" / "plain", evaluator_id
        ), evaluator_id

    chosen = "scale-out: local Dask cluster of 2 worker process(es) (chosen by parameter dask_workers), shards of 2"
    assert chosen in _log_text(client, runs["dask"].id, chosen)
    unchosen = "scale-out: no Dask (parameter dask_workers=0)"
    assert unchosen in _log_text(client, runs["plain"].id, unchosen)
    (shards,) = _subflows(client, runs["dask"].id)
    assert shards.name == "shards-of-dask" and shards.state.is_completed()
    assert not _subflows(client, runs["plain"].id)
    task_names = [task.name for task in client.read_task_runs(flow_run_filter=_flow_runs([shards.id]))]
    assert sum(name.startswith("ask-hosts-dask-shard-") for name in task_names) == 3, task_names
    assert sum(name.startswith("evaluate-text_matching-shard-") for name in task_names) == 3, task_names
    # the Dask cluster holds each shard's result on the worker that computed it, and the subflow logs which
    shard_log = _log_text(client, shards.id, "evaluator task(s) ran on")
    workers = set()
    for what in ("host shard", "evaluator"):
        line = next((line for line in shard_log.splitlines() if f"3 {what} task(s) ran on" in line), None)
        assert line is not None, shard_log
        workers |= set(line.partition(": ")[2].split(", "))
    assert len(workers) == 2 and all(worker.startswith("tcp://127.0.0.1:") for worker in workers), workers


def test_parameters_then_settings_then_the_default_choose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_DASK_ADDRESS", "tcp://10.0.0.5:8786")
    monkeypatch.setenv("ASSAY_SHARD_SIZE", "40")
    from_setting = choose_scale_out(None, None, 0)
    assert (from_setting.address, from_setting.shard_size) == ("tcp://10.0.0.5:8786", 40)
    assert from_setting.chosen_by == "setting ASSAY_DASK_ADDRESS"
    from_parameter = choose_scale_out(None, 3, 7)
    assert (from_parameter.address, from_parameter.workers, from_parameter.shard_size) == ("", 3, 7)
    assert "chosen by parameter dask_workers" in from_parameter.line()
    assert not choose_scale_out("", 0, 0).on_dask  # a parameter given as "no Dask" overrides the setting
    monkeypatch.setenv("ASSAY_DASK_ADDRESS", "nowhere")
    with pytest.raises(ValueError, match=r"ASSAY_DASK_ADDRESS 'nowhere' is not a scheduler address"):
        choose_scale_out(None, None, 0)
    with pytest.raises(ValueError, match=r"give dask_address .* or dask_workers .*, not both"):
        choose_scale_out("tcp://10.0.0.5:8786", 2, 0)
    monkeypatch.delenv("ASSAY_DASK_ADDRESS")
    default = choose_scale_out(None, None, 0)
    assert not default.on_dask and default.chosen_by.startswith("default")
    with pytest.raises(ValueError, match=r"^shard_size must be 0 \(no shards\) or more, got -1"):
        choose_scale_out(None, None, -1)  # the one owner of sharding checks it, for the flow and the CLI
    with pytest.raises(ValueError, match=r"^--shard-size must be"):
        choose_scale_out(None, 2, -1, names=("--dask-address", "--dask-workers"))


@pytest.mark.parametrize(
    ("arguments", "environment", "passed"),
    [
        (["--dask-workers", "2", "--shard-size", "5"], {}, {"dask_address": None, "dask_workers": 2, "shard_size": 5}),
        ([], {"ASSAY_DASK_WORKERS": "2"}, {"dask_address": None, "dask_workers": None, "shard_size": 250}),
        (["--dask-workers", "0"], {"ASSAY_DASK_WORKERS": "2"}, {"dask_address": None, "dask_workers": 0}),
    ],
)
def test_the_cli_passes_its_dask_flags_as_flow_parameters(
    arguments: list[str],
    environment: dict[str, str],
    passed: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The flow decides with the same rule, so a flag left out stays None there and the setting applies."""
    from typer.testing import CliRunner

    from assay.apps.cli import evaluate as evaluate_command
    from assay.apps.cli.main import app

    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    calls: list[dict[str, Any]] = []

    def fake_run_flow(**parameters: Any) -> dict[str, Any]:
        calls.append(parameters)
        raise SystemExit(0)

    monkeypatch.setattr(evaluate_command, "_run_flow", fake_run_flow)
    suite = small_suite(tmp_path)
    result = CliRunner().invoke(app, ["evaluate", "--suite", str(suite), "--out", str(tmp_path / "out"), *arguments])
    assert result.exit_code == 0, result.output
    assert {key: calls[0][key] for key in passed} == passed
    assert "shard_size" in passed or "shard_size" not in calls[0]


def test_the_evaluate_deployment_shows_the_dask_parameters_on_its_run_form() -> None:
    from prefect.utilities.callables import parameter_schema

    (spec,) = [spec for spec in load_deployments() if spec.name == "evaluate"]
    assert {key: spec.parameters[key] for key in ("dask_address", "dask_workers", "shard_size")} == {
        "dask_address": None,
        "dask_workers": None,
        "shard_size": 0,
    }
    assert {"dask_address", "dask_workers", "shard_size"} <= set(parameter_schema(spec.load_flow()).properties)


def _submit_in_the_run_form(
    api_url: str, deployment_id: Any, common: dict[str, Any], defaults: dict[str, Any]
) -> str:
    """Deployment -> Run -> Custom run: suite, run id, host and evaluators (in place of the deployment's default
    lists), 2 Dask workers, shards of 2; Submit.
    The id of the flow run the form created (found by the run name the form showed)."""
    ui = api_url.removesuffix("/api")
    with chromium_page("test_served_evaluate_deployment_runs_its_shards_on_dask") as browser:
        page = browser.page
        page.goto(f"{ui}/v2/deployments/deployment/{deployment_id}")
        page.get_by_role("button", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Custom run").click()
        for label, value in (("suite (Optional)", common["suite"]), ("run_id (Optional)", "dask")):
            field = run_form_field(page, label)
            field.get_by_role("tab", name="str").click()
            field.get_by_role("textbox").fill(value)
        hosts = run_form_field(page, "hosts (Optional)")
        hosts.get_by_role("tab", name="list").click()
        while hosts.get_by_role("textbox").count():  # the deployment's defaults, item by item
            hosts.get_by_role("button", name="Open menu").last.click()
            page.get_by_role("menuitem", name="Delete").click()
        for value in common["hosts"]:
            hosts.get_by_role("button", name="Add item").click()
            hosts.get_by_role("tab", name="str").last.click()  # an item may be a text or an object: a text
            hosts.get_by_role("textbox").last.fill(value)
        evaluators = run_form_field(page, "evaluators (Optional)")
        evaluators.get_by_role("tab", name="list").click()
        shown = set(defaults["evaluators"])  # a multi-select of the registered ids, the defaults chosen
        toggle_choices(page, v2_choices_trigger(evaluators), sorted(shown ^ set(common["evaluators"])))
        workers = run_form_field(page, "dask_workers (Optional)")
        workers.get_by_role("tab", name="int").click()
        workers.get_by_role("spinbutton").fill("2")
        run_form_field(page, "shard_size (Optional)").get_by_role("spinbutton").fill("2")
        run_name = page.get_by_role("textbox", name="Run Name").input_value()
        browser.shot("0-run-form-with-dask-workers")
        page.get_by_role("button", name="Submit").click()
        run_id = run_created_by_form(api_url, run_name)
        browser.shot("1-after-submit")
    return run_id


def _scores(out: Path, evaluator_id: str) -> list[dict[str, Any]]:
    """What the evaluator decided per row (not what the host took: durations differ between two runs)."""
    document = json.loads((out / evaluator_id / "results.json").read_text())
    return [{key: value for key, value in row.items() if key not in ("actual_duration", "lab_row")}
            for row in document["results"]]  # fmt: skip


def _flow_runs(ids: list[Any]) -> Any:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    return FlowRunFilter(id=FlowRunFilterId(any_=ids))


def _subflows(client: Any, parent_id: Any) -> list[Any]:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    return client.read_flow_runs(
        flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent_id]))
    )


def _log_text(client: Any, flow_run_id: Any, expected: str) -> str:
    """The run's log as the API has it, once it holds ``expected`` (runs send their logs in batches) or 15 s on."""
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    deadline = time.monotonic() + 15
    while True:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
        text = "\n".join(log.message for log in logs)
        if expected in text or time.monotonic() > deadline:
            return text
        time.sleep(0.5)


def _wait_for_deployment(client: Any, serve: subprocess.Popen, log_path: Path) -> Any:
    from prefect.exceptions import ObjectNotFound

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if serve.poll() is not None:
            raise AssertionError(f"serve exited with {serve.returncode}:\n{log_tail(log_path)}")
        try:
            return client.read_deployment_by_name("evaluate/evaluate")
        except ObjectNotFound:
            time.sleep(0.5)
    raise AssertionError(f"serve did not register evaluate/evaluate within 120 s:\n{log_tail(log_path)}")
