"""An operator re-validates production from the served ``production-revalidation`` deployment's Run form in
Prefect's default UI (V1, at the server's root) at 1280x800, by clicking and typing, on folders of real traces;
the week whose model ignores its documents fails the run, with the verdict in its Artifacts tab.

Two weeks of production are traced first (``tests.traces.test_production_traces._week``: a RAG app traced with
the OpenTelemetry SDK and OpenInference's openai instrumentation against the local OpenAI-compatible server,
exported as OTLP JSON): week 1 answered from the retrieved documents, week 2 by a regressed model that ignores
them. A real Prefect server and ``python -m assay.deployments.serve --deployment
production-revalidation/production-revalidation`` run in subprocesses. The test opens Deployments ->
production-revalidation -> Run -> Custom run, types the week-1 folder into ``traces`` (``sample`` kept at its
default) and submits: the run completes, verdict "no baseline". A person approves that run as the baseline at a
terminal (``assay baseline approve``). The same form with the week-2 folder: the run ends Failed, its state
message naming the regression against that baseline; its Artifacts tab shows the verdict (a fail, groundedness
worse) and the import report. The rag app's API key reaches neither the exported files nor the run's
parameters. The tests are these steps, in order, in one browser page (marked ``steps``: once one fails, the
rest are skipped). Screenshots (viewport, 1280x800) are kept under
``.assay/test-screenshots/test_production_revalidation_from_the_deployment_form_fails_on_a_regression/``.
"""

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.support.browser import Browser, chromium_page, skip_without_chromium, v1_field
from tests.support.prefect_server import ServedDeployment, api, run_created_by_form, serving_deployment
from tests.traces.rag_app import answer_from_context
from tests.traces.test_production_traces import _invented, _week

pytestmark = [pytest.mark.timeout(600), pytest.mark.steps]  # ~1.5 min on a quiet 2-core machine
REPO = Path(__file__).resolve().parents[2]
TEST = "test_production_revalidation_from_the_deployment_form_fails_on_a_regression"
NAME = "production-revalidation"  # the flow's, the deployment's and the re-validation's name
APPROVER = "Grace Hopper"
SECRET = "sk-test-not-a-secret"  # the rag app's API key (tests/traces/rag_app.py)
WIDTH, HEIGHT = 1280, 800
WAIT_S = 240
FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}
VERDICT_KEY = f"revalidation-{NAME}"  # tasks.revalidate.judge_against_baseline
IMPORT_KEY = f"traces-{NAME}"  # tasks.traces.import_production_traces


@dataclass
class Served(ServedDeployment):
    """The served deployment, and the traced weeks: week-1 (healthy), week-2 (regressed), the folders the trace
    exporter wrote."""

    weeks: dict[str, Path]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    skip_without_chromium()
    traces = tmp_path_factory.mktemp("production-traces")
    weeks = {
        "week-1": _week(traces / "week-1", answer_from_context, failing=False)[0].parent,
        "week-2": _week(traces / "week-2", _invented, failing=False)[0].parent,
    }
    home = tmp_path_factory.mktemp("prefect")
    base = tmp_path_factory.mktemp("production-deployment")
    with serving_deployment(f"{NAME}/{NAME}", home, base, REPO) as deployment:
        d = deployment
        yield Served(d.api_url, d.process, d.log, d.out, d.env, weeks)


def _shot(browser: Browser, name: str) -> Path:
    """A screenshot of what the person sees (the 1280x800 viewport: V1 scrolls inside its own panes)."""
    path = browser.folder / f"{name}.png"
    browser.page.screenshot(path=str(path))
    return path


def _submit_run(browser: Browser, served: Served, traces: Path, step: str) -> str:
    """Deployments -> production-revalidation -> Run -> Custom run in V1; ``traces`` typed into its field, the
    rest as the deployment has it; submitted, and the new run opened from the deployment's Runs tab."""
    page = browser.page
    page.goto(f"{served.ui}/deployments")
    # the flow and the deployment share the name: the deployment's link is the one to its page
    page.locator("a[href*='/deployments/deployment/']", has_text=NAME).first.click()
    page.wait_for_url(re.compile(r"/deployments/deployment/[0-9a-f-]{36}"))
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Custom run", exact=True).click()
    page.get_by_text("Run Name", exact=True).wait_for()

    field = v1_field(page, "traces", exact=True).locator("input, textarea").first
    field.scroll_into_view_if_needed()
    field.click()
    field.press("Control+a")
    field.press("Delete")
    field.press_sequentially(str(traces))
    expect(field).to_have_value(str(traces))
    sample = v1_field(page, "sample (Optional)", exact=True).locator("input, textarea").first
    expect(sample).to_have_value("200")  # the deployment's default, left as it is

    run_name = page.locator(".flow-run-name-input input").input_value()  # V1's label names no input (no id)
    assert run_name
    _shot(browser, f"{step}-run-form")
    page.get_by_role("button", name="Submit", exact=True).click()
    created = run_created_by_form(served.api_url, run_name, served.log)
    # V1 goes back to the deployment's Runs tab, where the new run is listed under its name (reloaded when the
    # list lags behind the API on a loaded machine).
    for attempt in range(1, 4):
        try:
            page.get_by_role("link", name=run_name, exact=True).first.click(timeout=20_000)
            page.wait_for_url(re.compile(r"/runs/flow-run/[0-9a-f-]{36}"), timeout=20_000)
            break
        except PlaywrightTimeoutError:
            _shot(browser, f"{step}-runs-tab-without-the-run-{attempt}")
            page.reload()
    else:
        raise AssertionError(f"the run {run_name!r} ({created}) never opened from the deployment's Runs tab")
    opened = re.search(r"/runs/flow-run/([0-9a-f-]{36})", page.url).group(1)
    assert opened == created, f"the form opened {opened}, it created {created} ({run_name!r})"
    assert "/v2/" not in page.url
    return opened


def _final_state(served: Served, flow_run_id: str) -> dict:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        state = api(served.api_url, f"/flow_runs/{flow_run_id}")["state"]
        if state["type"] in FINAL:
            return state
        assert served.process.poll() is None, f"serve exited during the run:\n{served.tail()}"
        time.sleep(1)
    raise AssertionError(f"the run did not finish within {WAIT_S} s:\n{served.tail()}")


def _show_final(browser: Browser, served: Served, flow_run_id: str, state: str, step: str) -> None:
    """The run's page as the person sees it once the run ended: its state badge."""
    page = browser.page
    page.goto(f"{served.ui}/runs/flow-run/{flow_run_id}")
    expect(page.locator(".state-badge").first).to_contain_text(state.capitalize(), timeout=30_000)
    _shot(browser, f"{step}-run-{state.lower()}")


def _export_of(served: Served, flow_run_id: str) -> Path:
    """The Assay run's export folder, found by its run id (the folder's name, as its run.json says) as the flow
    run's own verdict artifact names it ("- Run: <run id>")."""
    artifacts = api(served.api_url, "/artifacts/filter", {
        "artifacts": {"flow_run_id": {"any_": [flow_run_id]}, "key": {"any_": [VERDICT_KEY]}},
    })  # fmt: skip
    assert len(artifacts) == 1, artifacts
    run_id = re.search(r"^- Run: (\S+)$", artifacts[0]["data"], re.MULTILINE).group(1)
    folder = served.out / run_id
    record = json.loads((folder / "run.json").read_text())
    assert record["run_id"] == run_id and Path(record["export"]) == folder, record
    return folder


def _open_artifact(browser: Browser, served: Served, flow_run_id: str, key: str, step: str) -> str:
    """The run's Artifacts tab, then the card of ``key`` opened: the artifact's page text, as drawn."""
    page = browser.page
    page.goto(f"{served.ui}/runs/flow-run/{flow_run_id}")
    # V1's tabs are list items of a "tablist" without the "tab" role
    page.get_by_role("tablist").get_by_text("Artifacts", exact=True).click()
    # the step tasks publish them: their cards, under "Task runs", are drawn by a virtual scroller once scrolled near
    page.locator(".flow-run-artifacts__subheading", has_text="Task runs").scroll_into_view_if_needed(timeout=30_000)
    card = page.locator(".artifact-card", has=page.locator(".artifact-card__title", has_text=key)).first
    for _ in range(20):
        page.mouse.move(WIDTH // 2, HEIGHT - 60)
        page.mouse.wheel(0, 300)
        try:
            card.wait_for(timeout=3_000)
            break
        except PlaywrightTimeoutError:
            continue
    card.scroll_into_view_if_needed(timeout=10_000)
    _shot(browser, f"{step}-artifacts-tab")
    card.click()
    page.wait_for_url(re.compile(r"/artifacts/artifact/[0-9a-f-]{36}"), timeout=30_000)
    heading = page.locator("h1").filter(has_text=re.compile(r"^(Re-validation|Production traces)")).first
    heading.wait_for(timeout=30_000)
    box = heading.bounding_box()
    assert box and box["width"] > 0 and box["height"] > 0, f"{key}: its heading is not drawn"
    _shot(browser, f"{step}-artifact-{key}")
    return " ".join(page.locator("main, body").first.inner_text().split())


def _assay(served: Served, *args: str) -> subprocess.CompletedProcess:
    """The assay CLI at a terminal with the serving process's environment (its ASSAY_HOME: the same store)."""
    command = [str(Path(sys.executable).parent / "assay"), *args]
    return subprocess.run(command, env=served.env, cwd=REPO, capture_output=True, text=True, timeout=120)


def _files_naming(folder: Path, text: str) -> list[str]:
    needle = text.encode()
    return [str(path) for path in folder.rglob("*") if path.is_file() and needle in path.read_bytes()]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium page for both weeks, as the operator keeps one browser open."""
    with chromium_page(TEST, width=WIDTH, height=HEIGHT) as session:
        yield session


@pytest.fixture(scope="module")
def runs() -> dict[str, str]:
    """The flow run ids of the weeks submitted so far, for the steps after."""
    return {}


def test_week_1_completes_without_a_baseline_and_is_approved_at_a_terminal(
    served: Served, browser: Browser, runs: dict[str, str]
) -> None:
    """Week 1: no baseline yet, so nothing to compare; the run completes. A person approves it as the baseline
    at a terminal."""
    first = _submit_run(browser, served, served.weeks["week-1"], "1")
    runs["week-1"] = first
    state = _final_state(served, first)
    assert state["type"] == "COMPLETED", f"{state['type']}: {state['message']}\n{served.tail()}"
    parameters = api(served.api_url, f"/flow_runs/{first}")["parameters"]
    assert parameters["traces"] == str(served.weeks["week-1"]) and parameters["sample"] == "200", parameters
    _show_final(browser, served, first, "COMPLETED", "1")
    baseline = _export_of(served, first)
    verdict = json.loads((baseline / "revalidation" / "verdict.json").read_text())
    assert verdict["verdict"] == "no baseline", verdict
    first_verdict = _open_artifact(browser, served, first, VERDICT_KEY, "1")
    assert f"Re-validation {NAME}: no baseline" in first_verdict, first_verdict[:600]

    approved = _assay(served, "baseline", "approve", baseline.name, "--name", NAME, "--by", APPROVER)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert f"run {baseline.name}, approved by {APPROVER}" in " ".join(approved.stdout.split()), approved.stdout


def test_production_revalidation_from_the_deployment_form_fails_on_a_regression(
    served: Served, browser: Browser, runs: dict[str, str]
) -> None:
    """Week 2: the regressed model's answers ignore the documents; the run fails against week 1's baseline,
    and its Artifacts tab shows the verdict and the import report."""
    baseline = _export_of(served, runs["week-1"])
    second = _submit_run(browser, served, served.weeks["week-2"], "2")
    runs["week-2"] = second
    state = _final_state(served, second)
    message = " ".join((state["message"] or "").split())
    assert state["type"] == "FAILED", f"{state['type']}: {message}\n{served.tail()}"
    assert f"regression against baseline run {baseline.name}: " in message, message
    assert re.search(r"[1-9]\d* metric\(s\) significantly worse", message), message
    assert "bank-assistant groundedness.groundedness " in message, message  # the state names the metric
    _show_final(browser, served, second, "FAILED", "2")
    regressed = _export_of(served, second)
    assert sorted(path.name for path in served.out.iterdir()) == sorted([baseline.name, regressed.name])
    comparison = json.loads((regressed / "revalidation" / "comparison.json").read_text())
    worse = {delta["metric"] for delta in comparison["deltas"] if delta["change"] == "worse"}
    assert "groundedness" in worse, comparison["deltas"]

    shown = _open_artifact(browser, served, second, VERDICT_KEY, "2")
    assert f"Re-validation {NAME}: FAILED" in shown, shown[:600]
    assert f"Baseline: run {baseline.name}, approved by {APPROVER}" in shown, shown[:600]
    assert "significantly worse" in shown and "groundedness" in shown, shown[:2000]
    report = _open_artifact(browser, served, second, IMPORT_KEY, "2")
    assert "Production traces imported" in report, report[:600]
    assert "/v2/" not in browser.page.url
    assert browser.dialogs == []


def test_the_rag_apps_key_went_nowhere(served: Served, runs: dict[str, str]) -> None:
    """Not into the labs, exports or store, nor into the runs' parameters (nor anywhere in the Prefect server's
    database and logs)."""
    assert _files_naming(served.out, SECRET) == []
    assert _files_naming(served.home, SECRET) == []
    assert _files_naming(Path(served.env["PREFECT_HOME"]), SECRET) == []
    for flow_run_id in runs.values():
        assert SECRET not in json.dumps(api(served.api_url, f"/flow_runs/{flow_run_id}")["parameters"])
