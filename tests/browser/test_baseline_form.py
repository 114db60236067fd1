"""A person approves a re-validation baseline in Prefect's default UI (V1) at 1280x800, by clicking: the
approve-baseline flow pauses with its form, the person reads which run they approve and which one it replaces,
picks "approve", types their name and submits; the approval is recorded under that name, via prefect-ui."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from assay.flows.baseline import APPROVE, DECLINE

from assay.baselines import Baselines
from assay.storage import LocalObjectStore
from assay.storage.runs import RunStates
from tests.support.browser import (
    chromium_page,
    skip_without_chromium,
    v1_choose_option,
    v1_field,
    v1_open_resume_dialog,
    v1_select_value,
    v1_submit_as,
)
from tests.support.prefect_server import running_prefect_server, server_environment

pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[2]
FLOW_CALL = "import json, sys; from flows.baseline import approve_baseline_flow as f; f(**json.loads(sys.argv[1]))"


def _paused_run(api_url: str, process: subprocess.Popen, log: Path) -> str:
    import urllib.request

    body = json.dumps({"flows": {"name": {"any_": ["approve-baseline"]}}}).encode()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        request = urllib.request.Request(
            f"{api_url}/flow_runs/filter", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            runs = json.load(response)
        if runs and runs[0]["state"]["type"] == "PAUSED":
            return str(runs[0]["id"])
        assert process.poll() is None, log.read_text()[-3000:]
        time.sleep(0.5)
    raise AssertionError(f"the approval form never opened:\n{log.read_text()[-3000:]}")


def test_a_baseline_is_approved_by_clicking_in_the_default_ui(tmp_path: Path) -> None:
    skip_without_chromium()
    store = LocalObjectStore(tmp_path / "assay" / "store")
    states = RunStates(store)
    first = states.finish(states.start("first", workflow="evaluate")).run_id
    second = states.finish(states.start("second", workflow="evaluate", export="/exports/second")).run_id
    Baselines(store).approve("nightly", first, "Ana Lima")
    (tmp_path / "prefect").mkdir()
    with running_prefect_server(tmp_path / "prefect") as api_url:
        env = {**server_environment(tmp_path / "prefect", api_url), "ASSAY_HOME": str(tmp_path / "assay")}
        log = tmp_path / "flow.log"
        with open(log, "wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-c", FLOW_CALL, json.dumps({"run_id": second, "name": "nightly"})],
                cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            flow_run = _paused_run(api_url, process, log)
            with chromium_page(
                "test_a_baseline_is_approved_by_clicking_in_the_default_ui", width=1280, height=800
            ) as browser:
                dialog = v1_open_resume_dialog(browser, api_url.removesuffix("/api"), flow_run)
                question = f"Approve run {second} as the baseline?"
                field = v1_field(dialog, question)
                shown_texts = (question, "Verdict: none recorded: not a re-validation run", "Replaces: run " + first,
                               "approved by Ana Lima", "Workflow: evaluate")  # fmt: skip
                for text in shown_texts:
                    shown = field.get_by_text(text).first
                    shown.scroll_into_view_if_needed()
                    box = shown.bounding_box()
                    assert box and box["width"] > 0 and box["height"] > 0, f"{text!r} is not visible: {box}"
                assert v1_select_value(dialog, question) == DECLINE  # nothing is approved by Submit alone
                v1_choose_option(browser, dialog, question, APPROVE)
                v1_submit_as(browser, dialog, "Grace Hopper", "approve")
            assert process.wait(timeout=120) == 0, log.read_text()[-3000:]
        finally:
            if process.poll() is None:
                process.kill()
    approval = Baselines(store).get("nightly")
    assert approval is not None
    assert (approval.run_id, approval.approved_by, approval.source, approval.via) == (
        second, "Grace Hopper", "person", "prefect-ui"
    )  # fmt: skip
