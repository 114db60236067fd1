"""The MRM workflow against a real Prefect server: every review pause resumed through the API with input,
and a run killed mid-way that resumes on rerun without redoing finished work."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.corpora import sample_data_path
from tests.support.prefect_server import running_prefect_server, server_environment

DOCUMENTS = [
    "report-a-lost-or-stolen-card.md",
    "easy-access-savings-product-sheet.md",
    "fixed-rate-bond-product-sheet.md",
    "overdraft-fees-policy.md",
    "contact-us.md",
    "personal-loan-product-sheet.md",
    "dispute-a-card-transaction.md",
    "set-up-a-standing-order.md",
]
FLOW_CALL = "import json, sys; from flows.mrm import mrm_workflow; mrm_workflow(**json.loads(sys.argv[1]))"
WAIT_S = 420


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    home = tmp_path_factory.mktemp("prefect-home")
    with running_prefect_server(home) as api_url:
        yield api_url, home


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for name in DOCUMENTS:
        shutil.copy(sample_data_path() / "corpus" / name, folder / name)
    return folder


def start_flow(server: tuple[str, Path], assay_home: Path, **parameters: object) -> subprocess.Popen:
    api_url, prefect_home = server
    env = server_environment(prefect_home, api_url)
    env.update(
        {
            "ASSAY_HOME": str(assay_home),
            "NUMBA_CACHE_DIR": str(prefect_home / "numba"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TQDM_DISABLE": "1",
        }
    )
    base = {
        "per_topic": 1,
        "evaluators": ["text_matching", "answer_semantic_similarity"],
        "variation_perturbators": ["comma"],
        "adversarial_perturbators": ["base64"],
    }
    log = open(assay_home / "flow.log", "ab")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, "-c", FLOW_CALL, json.dumps({**base, **parameters})],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).parents[2],
    )


def wait_for(condition, process: subprocess.Popen, home: Path, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if process.poll() is not None and not condition():
            raise AssertionError(f"flow exited ({process.returncode}) before {what}:\n{_tail(home)}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"timed out waiting for {what}:\n{_tail(home)}")
        time.sleep(1)


def _tail(home: Path) -> str:
    return (home / "flow.log").read_text(errors="replace")[-4000:]


def test_every_review_pause_is_resumed_through_the_api(server, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateName
    from prefect.flow_runs import resume_flow_run
    from prefect.settings import PREFECT_API_URL, temporary_settings

    out = tmp_path / "out"
    process = start_flow(server, tmp_path, out=str(out), corpus=str(corpus), interactive=True, name="paused")

    def paused_run():  # type: ignore[no-untyped-def]
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"])))
            )
        return runs[0] if runs else None

    def answer(step: int) -> dict:
        """What the reviewer types in the form of the step-th pause (read only once that step is reached): the
        second pause gets a mistyped case key, so the form opens again and the third pause is the correction."""
        if step == 0:
            return {"excluded_topic_ids": [], "reviewer": "ana"}
        if step == 1:
            return {"excluded_case_keys": ["no-such-case"], "reviewer": "ana"}
        if step == 2:
            suite = json.loads((out / "test-generation" / "suite.json").read_text())
            return {"excluded_case_keys": [suite["tests"][0]["test_cases"][0]["key"]], "reviewer": "ana"}
        if step == 3:
            items = json.loads((out / "calibration" / "review_items.json").read_text())
            return {
                "passed_item_ids": [items[0]["item_id"]],
                "failed_item_ids": [items[1]["item_id"]],
                "reviewer": "ana",
            }
        return {"names": {"0": "fee questions"}, "reviewer": "ana"}

    answered_states: set = set()

    def new_pause():  # type: ignore[no-untyped-def]
        run = paused_run()
        return run if run is not None and run.state.id not in answered_states else None

    with temporary_settings({PREFECT_API_URL: server[0]}):
        for step in range(5):
            wait_for(lambda: new_pause() is not None, process, tmp_path, f"pause {step + 1}")
            run = new_pause()
            answered_states.add(run.state.id)
            resume_flow_run(run.id, run_input=answer(step))
    assert process.wait(timeout=WAIT_S) == 0, _tail(tmp_path)

    decisions = {d["step"]: d for d in json.loads((out / "workflow_summary.json").read_text())["decisions"]}
    assert {step: d["decided_by"] for step, d in decisions.items()} == dict.fromkeys(decisions, "person")
    excluded = decisions["test-validation"]["decision"]["excluded_case_keys"]
    assert excluded != ["no-such-case"] and decisions["test-validation"]["reviewer"] == "ana"
    lab_keys = {
        row["test_case"]["key"]
        for row in json.loads((out / "automated-evaluation" / "test_lab.json").read_text())["rows"]
    }
    assert len(excluded) == 1 and excluded[0] not in lab_keys
    assert decisions["calibration"]["note"] == "in the Prefect UI by ana"
    labels = json.loads((out / "calibration" / "labels.json").read_text())
    assert [(label["human_passes"], label["reviewer"]) for label in labels] == [(True, "ana"), (False, "ana")]
    for name in ("corpus_patch.md", "system_prompt_extension.md", "guardrails.json"):
        assert (out / "artifacts" / name).exists()


def test_a_killed_run_resumes_without_redoing_finished_work(server, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    arguments = {"out": str(out), "corpus": str(corpus), "interactive": False, "name": "killed"}
    process = start_flow(server, tmp_path, **arguments)
    wait_for(lambda: (out / "calibration" / "review_items.json").exists(), process, tmp_path, "step 5")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    assert json.loads((out / "run.json").read_text())["status"] == "running"
    shards = tmp_path / "store" / "runs" / run_id / "lab" / "sample-rag"
    answered = sorted(path.name for path in shards.iterdir())

    rerun = start_flow(server, tmp_path, **arguments)
    assert rerun.wait(timeout=WAIT_S) == 0, _tail(tmp_path)
    assert json.loads((out / "run.json").read_text()) | {"finished_at": None} == json.loads(
        (out / "run.json").read_text()
    ) | {"finished_at": None}
    summary = json.loads((out / "workflow_summary.json").read_text())
    assert summary["run_id"] == run_id
    assert sorted(path.name for path in shards.iterdir()) == answered  # the host was asked nothing again
    assert summary["steps"]["topic-modeling"]["wall_s"] < 10  # served from the cache, not refitted
