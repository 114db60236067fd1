"""The deployments registered on a real Prefect server both ways a user would: ``prefect deploy`` from
prefect.yaml (process work pool) and ``python -m assay.deployments.serve``; a served deployment is then run through
the API to Completed, writing its results where the deployment says."""

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from assay.deployments.definitions import REPOSITORY_ROOT, load_deployments
from prefect.exceptions import PrefectHTTPStatusError

from assay.formats import import_file
from assay.testing.processes import stop_group
from tests.support.prefect_server import log_tail, wait_for_final_state, wait_for_paused

PREFECT = str(Path(sys.executable).parent / "prefect")
SPECS = {spec.name: spec for spec in load_deployments()}
FLOW_NAMES = {
    "interactive": "mrm-workflow",
    "unattended": "mrm-workflow",
    "evaluate": "evaluate",
    "revalidation": "revalidation",
    "production-revalidation": "production-revalidation",
    "approve-baseline": "approve-baseline",
}


def step_fields(schema: dict[str, Any], parameter: str) -> set[str]:
    """The properties of a nested model parameter, as the UI's Run form renders them."""
    reference = schema["properties"][parameter]["$ref"].rsplit("/", 1)[-1]
    return set(schema["definitions"][reference]["properties"])


def cron_strings(deployment: Any) -> list[str]:
    return [item.schedule.cron for item in deployment.schedules]


def test_prefect_deploy_registers_every_deployment_with_typed_parameters(
    server: tuple[str, dict[str, str]], client: Any
) -> None:
    env = server[1]
    pool = subprocess.run(
        [PREFECT, "work-pool", "create", "assay-process", "--type", "process"],
        env=env,
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pool.returncode == 0, pool.stdout + pool.stderr
    deploy = subprocess.run(
        [PREFECT, "--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"],
        env=env,
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert deploy.returncode == 0, deploy.stdout[-3000:] + deploy.stderr[-3000:]

    for name, spec in SPECS.items():
        deployment = client.read_deployment_by_name(f"{FLOW_NAMES[name]}/{name}")
        assert deployment.work_pool_name == "assay-process"
        assert deployment.entrypoint == spec.entrypoint
        assert deployment.parameters == spec.parameters
        assert deployment.pull_steps == [
            {"prefect.deployments.steps.set_working_directory": {"directory": str(REPOSITORY_ROOT)}}
        ]
    interactive = client.read_deployment_by_name("mrm-workflow/interactive")
    schema = interactive.parameter_openapi_schema
    assert {"chunk_words", "top_n_words", "umap_n_neighbors"} <= step_fields(schema, "topic_modeling")
    assert {"per_metric", "answers_per_form"} == step_fields(schema, "calibration")  # page_size moved to review
    assert {"page_size"} == step_fields(schema, "review")
    assert interactive.schedules == []
    assert cron_strings(client.read_deployment_by_name("revalidation/revalidation")) == ["0 6 * * 1"]
    production = client.read_deployment_by_name("production-revalidation/production-revalidation")
    assert cron_strings(production) == ["0 5 * * *"]
    assert cron_strings(client.read_deployment_by_name("mrm-workflow/unattended")) == ["0 2 * * 0"]

    # Serving a name that a worker deployment holds would leave it with worker-only storage: serve refuses.
    refused = subprocess.run(
        [sys.executable, "-m", "assay.deployments.serve", "--deployment", "evaluate"],
        env=env,
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0
    assert "evaluate/evaluate is registered for work pool 'assay-process'" in refused.stderr
    assert "--replace" in refused.stderr

    # The server enforces the typed schema, as the UI's Run form does: a step value out of range is refused.
    with pytest.raises(PrefectHTTPStatusError, match=r"409.*per_topic"):
        client.create_flow_run_from_deployment(interactive.id, parameters={"test_generation": {"per_topic": 0}})


def test_served_evaluate_deployment_runs_to_completed_and_writes_results(
    server: tuple[str, dict[str, str]], client: Any, tmp_path: Path
) -> None:
    out_root = tmp_path / "exports"
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "assay.deployments.serve", "--out", "exports", "--replace"],
            env={**server[1], "PREFECT_RUNNER_POLL_FREQUENCY": "2"},
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        served = _wait_for_served(client, serve, log_path, out_root)
        for name, spec in SPECS.items():
            out = {"out": str(out_root / name / "{run_id}")} if name != "approve-baseline" else {}
            assert served[name].parameters == {**spec.parameters, **out}
            assert not served[name].pull_steps  # the runner runs it in its own working directory
        schema = served["interactive"].parameter_openapi_schema
        assert {"per_topic", "generators"} == step_fields(schema, "test_generation")
        assert cron_strings(served["revalidation"]) == ["0 6 * * 1"]

        # The cheapest run a person would start from the form: keyword retrieval, one string-matching evaluator.
        run = client.create_flow_run_from_deployment(
            served["evaluate"].id, parameters={"evaluators": ["text_matching"], "hosts": ["sample-rag-keyword"]}
        )
        state = wait_for_final_state(client, run.id, serve, log_path)
        assert state.is_completed(), f"{state.type}: {state.message}\n{log_tail(log_path)}"

        # Approving that run as a baseline, served the same way, reaches the approver's form.
        (finished,) = (out_root / "evaluate").iterdir()  # named after the run id, as `assay artifacts list` shows
        approval = client.create_flow_run_from_deployment(
            served["approve-baseline"].id, parameters={"run_id": finished.name}
        )
        assert wait_for_paused(client, approval.id, serve, log_path).is_paused()
    finally:
        stop_group(serve)

    (folder,) = (out_root / "evaluate").iterdir()  # the run's own folder, named after its run id
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["run_id"] == folder.name
    results = json.loads((folder / "text_matching" / "results.json").read_text())
    suite = import_file(REPOSITORY_ROOT / SPECS["evaluate"].parameters["suite"], "auto")
    assert len(results["results"]) == suite.case_count  # the one host answered every case
    assert not (folder / "answer_semantic_similarity").exists(), "the run's evaluators were ignored"


def _wait_for_served(client: Any, serve: subprocess.Popen, log_path: Path, out_root: Path) -> dict[str, Any]:
    """Every deployment of prefect.yaml, once serve has registered it with its ``--out`` folder."""
    from prefect.exceptions import ObjectNotFound

    deadline = time.monotonic() + 180
    served: dict[str, Any] = {}
    while time.monotonic() < deadline:
        if serve.poll() is not None:
            raise AssertionError(f"serve exited with {serve.returncode}:\n{log_tail(log_path)}")
        for name in set(SPECS) - set(served):
            try:
                deployment = client.read_deployment_by_name(f"{FLOW_NAMES[name]}/{name}")
            except ObjectNotFound:
                continue
            expected = None if name == "approve-baseline" else str(out_root / name / "{run_id}")
            # serve's own registration: no work pool (the other test's `prefect deploy` registered one)
            if deployment.parameters.get("out") == expected and deployment.work_pool_name is None:
                served[name] = deployment
        if len(served) == len(SPECS):
            return served
        time.sleep(1)
    raise AssertionError(f"serve registered only {sorted(served)} within 180 s:\n{log_tail(log_path)}")
