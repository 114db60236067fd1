"""A person answers the four MRM review pauses in the Prefect UI, in chromium, by clicking.

A real Prefect server runs the small review flow (``tests.browser.review_flow``) in a subprocess; the test
opens the paused run in the UI's default (V2) interface, picks options in the selects, types its name and
presses Resume, then checks the flow went on and stored exactly what was clicked. Screenshots of every
form are kept under ``.assay/test-screenshots/test_review_forms_in_the_prefect_ui/``.
"""

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import (
    choose_option,
    chromium_page,
    form_select,
    open_resume_dialog,
    resume_as,
    skip_without_chromium,
)
from tests.support.prefect_server import running_prefect_server, server_environment

pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[2]


def _api(api_url: str, path: str, body: dict | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{api_url}{path}", data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


class PausedRun:
    """The flow run under test, seen through the API: waits for each new pause and for the end."""

    def __init__(self, api_url: str, process: subprocess.Popen, log: Path) -> None:
        self.api_url, self.process, self.log = api_url, process, log
        self.id = ""
        self.last_state = ""

    def state(self) -> dict:
        return _api(self.api_url, f"/flow_runs/{self.id}")["state"]

    def next_pause(self, timeout: float = 90) -> None:
        """Wait until the run is paused in a state not seen before (a new form)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.id:
                runs = _api(self.api_url, "/flow_runs/filter", {"limit": 1})
                self.id = runs[0]["id"] if runs else ""
            if self.id:
                state = self.state()
                if state["type"] == "PAUSED" and state["id"] != self.last_state:
                    self.last_state = state["id"]
                    return
            assert self.process.poll() is None, f"the flow ended early:\n{self.log.read_text()[-3000:]}"
            time.sleep(0.5)
        raise AssertionError(f"no new pause within {timeout} s:\n{self.log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, PausedRun, Path]]:
    skip_without_chromium()
    home = tmp_path_factory.mktemp("prefect")
    out = tmp_path_factory.mktemp("review")
    with running_prefect_server(home) as api_url:
        log = out / "flow.log"
        with open(log, "wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.browser.review_flow", str(out)],
                cwd=REPO, env=server_environment(home, api_url), stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
            try:
                yield api_url, PausedRun(api_url, process, log), out
            finally:
                if process.poll() is None:
                    process.kill()
                process.wait()


def test_review_forms_in_the_prefect_ui(review_run: tuple[str, PausedRun, Path]) -> None:
    from playwright.sync_api import expect

    api_url, run, out = review_run
    ui = api_url.removesuffix("/api")
    with chromium_page("test_review_forms_in_the_prefect_ui") as browser:
        # Topics: submitted without a name first, which the UI refuses while the run stays paused.
        run.next_pause()
        dialog = open_resume_dialog(browser, ui, str(run.id))
        expect(dialog.get_by_text("Topics found in the corpus")).to_be_visible()
        expect(dialog.get_by_text("Refunds are paid within 14 days")).to_be_visible()
        assert dialog.locator("script").count() == 0, "corpus text must not become markup"
        choose_option(browser, dialog, "2. Topic 1: shipping | <script>", "exclude")
        dialog.get_by_role("button", name="Resume", exact=True).click()
        browser.page.get_by_text("'reviewer' is a required property").wait_for()
        browser.shot("1-topics-without-name")
        time.sleep(2)
        assert run.state()["type"] == "PAUSED"
        expect(dialog).to_be_visible()
        resume_as(browser, dialog, "Ada Lovelace", "1-topics")

        # Cases: the outlier is proposed for exclusion; a blank name is sent back with the reason on top.
        run.next_pause()
        dialog = open_resume_dialog(browser, ui, str(run.id))
        assert form_select(dialog, "3. Case case-3").inner_text().strip() == "exclude"
        expect(dialog.get_by_text("far from its source")).to_be_visible()
        choose_option(browser, dialog, "1. Case case-1", "exclude")
        choose_option(browser, dialog, "3. Case case-3", "keep")
        resume_as(browser, dialog, "   ", "2-cases-blank-name")
        run.next_pause()
        dialog = open_resume_dialog(browser, ui, str(run.id))
        expect(dialog.get_by_text("Not accepted, please correct:")).to_be_visible()
        assert form_select(dialog, "1. Case case-1").inner_text().strip() == "exclude"
        resume_as(browser, dialog, "Ada Lovelace", "2-cases")

        # Calibration: three pages of four, four and two answers.
        labels = {1: "fail", 2: "fail", 4: "pass", 5: "pass", 6: "fail", 9: "pass", 10: "fail"}
        for number, items in ((1, range(1, 5)), (2, range(5, 9)), (3, range(9, 11))):
            run.next_pause()
            dialog = open_resume_dialog(browser, ui, str(run.id))
            expect(dialog.get_by_text(f"Page {number} of 3")).to_be_visible()
            expect(dialog.get_by_text("at least 6 labels")).to_be_visible()
            for n in items:
                if n in labels:
                    choose_option(browser, dialog, f"{n}. similarity on case case-{n}", labels[n])
            resume_as(browser, dialog, "Ada Lovelace", f"3-calibration-page-{number}")

        # Clusters: the keyword names are proposed; one is renamed.
        run.next_pause()
        dialog = open_resume_dialog(browser, ui, str(run.id))
        name = dialog.get_by_label("2. Name of cluster 1 (Optional)")
        assert name.input_value() == "shipping, cost"
        name.fill("Shipping prices unknown")
        resume_as(browser, dialog, "Ada Lovelace", "4-clusters")

        run.process.wait(timeout=60)
        assert run.process.returncode == 0, run.log.read_text()[-3000:]
        assert run.state()["type"] == "COMPLETED"
        assert browser.dialogs == [], "text from the corpus or the answers ran as script"

    decisions = json.loads((out / "decisions.json").read_text())
    for step in ("topic-modeling", "test-validation", "calibration", "failure-clustering"):
        assert decisions[step]["reviewer"] == "Ada Lovelace"
        assert decisions[step]["source"] == "prefect-ui"
        assert decisions[step]["decided_by"] == "person"
    assert decisions["topic-modeling"]["decision"] == {"excluded_topic_ids": [1]}
    assert decisions["test-validation"]["decision"] == {"excluded_case_keys": ["case-1"]}
    item = "answer_similarity/similarity/sample-rag/case-{}".format
    assert decisions["calibration"]["decision"] == {
        "passed_item_ids": [item(n) for n in (4, 5, 9)],
        "failed_item_ids": [item(n) for n in (1, 2, 6, 10)],
    }
    assert decisions["failure-clustering"]["decision"] == {
        "names": {"0": "refund, days, paid", "1": "Shipping prices unknown"},
        "kept_proposed": ["0"],
    }
