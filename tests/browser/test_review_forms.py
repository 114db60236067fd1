"""A person answers the MRM review pauses in the Prefect UI, in chromium at 1280x800, by clicking.

A real Prefect server runs the small review flow (``tests.browser.review_flow``) in a subprocess; the tests,
the steps of one person's session in one browser page (marked ``steps``: once one fails, the rest are skipped),
open the paused run in the UI's V2 interface (the default V1 one is ``test_review_forms_v1.py``), check each
item's evidence is drawn (non-zero boxes), pick options in the selects, type the name and press Resume, then
check the flow went on and stored exactly what was clicked. Evaluations run on the same server meanwhile, so
every Submit competes with their writes. Screenshots of every form are kept under
``.assay/test-screenshots/test_review_forms_in_the_prefect_ui/``.
"""

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.testing.processes import stop_group
from tests.browser.review_flow import ReviewRun
from tests.support.browser import (
    choose_option,
    chromium_page,
    form_select,
    open_resume_dialog,
    resume_as,
    skip_without_chromium,
)
from tests.support.prefect_server import api, running_prefect_server, server_environment

pytestmark = [pytest.mark.timeout(300), pytest.mark.steps]
REPO = Path(__file__).resolve().parents[2]


# Evaluations run one after another on the same server while the person answers the forms: their task runs,
# logs and artifacts are the writes a Submit competes with on the server's SQLite database.
EVALUATIONS = """
import itertools, sys
from assay.corpora import sample_data_path
from assay.flows.evaluate import evaluate_flow
suite = str(sample_data_path() / "suite.json")
for n in itertools.count():
    evaluate_flow(out=f"{sys.argv[1]}/{n}", suite=suite, evaluators=["text_matching"], name=f"load-{n}")
"""


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ReviewRun, Path]]:
    skip_without_chromium()
    home = tmp_path_factory.mktemp("prefect")
    out = tmp_path_factory.mktemp("review")
    with running_prefect_server(home) as api_url:
        env = {**server_environment(home, api_url), "ASSAY_HOME": str(out / "assay-home")}
        log = out / "flow.log"
        with open(log, "wb") as sink, open(out / "evaluations.log", "wb") as evaluations_log:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.browser.review_flow", str(out)],
                cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
            load = subprocess.Popen(
                [sys.executable, "-c", EVALUATIONS, str(out / "evaluations")],
                cwd=REPO, env=env, stdout=evaluations_log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            try:
                yield api_url, ReviewRun(api_url, process, log), out
            finally:
                stop_group(load, signal.SIGKILL)  # a load to compete with, nothing to finish (SIGINT: 30 s to end)
                if process.poll() is None:
                    process.kill()
                process.wait()


def _visible(browser: Any, dialog: Any, text: str) -> None:
    """``text`` is drawn where a person sees it: scrolled into view inside the form, with a non-zero box (a
    text that is only in the DOM, like a description drawn 0 px high, fails)."""
    found = dialog.get_by_text(text).first
    found.scroll_into_view_if_needed(timeout=15_000)
    box = found.bounding_box()
    assert box is not None and box["width"] > 0 and box["height"] > 0, f"{text!r} is not visible: {box}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One chromium page for the whole session of forms, as a person keeps one browser open."""
    with chromium_page("test_review_forms_in_the_prefect_ui", width=1280, height=800) as session:
        yield session


def test_topics_a_nameless_answer_is_refused_and_the_named_one_taken(
    review_run: tuple[str, ReviewRun, Path], browser: Any
) -> None:
    """Topics: one form; each topic's keywords and a chunk in its field; submitted without a name first, which
    the UI refuses while the run stays paused."""
    from playwright.sync_api import expect

    api_url, run, _ = review_run
    ui = api_url.removesuffix("/api")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    topic_texts = (
        "Topics found in the corpus",
        "Every one of the 3 topics is in the forms so far",
        "Keywords: refund, receipt",
        "Refunds are paid within 14 days",
        "3. Topic 2: security",
    )
    for text in topic_texts:
        _visible(browser, dialog, text)
    assert dialog.locator("script").count() == 0, "corpus text must not become markup"
    choose_option(browser, dialog, "2. Topic 1: shipping | <script>", "exclude")
    dialog.get_by_role("button", name="Resume", exact=True).click()
    browser.page.get_by_text("'reviewer' is a required property").wait_for()
    browser.shot("1-topics-without-name")
    time.sleep(2)
    assert run.state()["type"] == "PAUSED"
    expect(dialog).to_be_visible()
    resume_as(browser, dialog, "Ada Lovelace", "1-topics")


def test_cases_a_blank_name_is_sent_back_with_the_reason_and_the_choices_kept(
    review_run: tuple[str, ReviewRun, Path], browser: Any
) -> None:
    """Cases: the outlier comes first, proposed for exclusion, with its reason; a blank name is sent back with
    the reason on top and the person's choices kept."""
    api_url, run, _ = review_run
    ui = api_url.removesuffix("/api")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    outlier = "1. Case case-3: flagged outlier, proposed exclude"
    assert form_select(dialog, outlier).inner_text().strip() == "exclude"
    for text in ("Why flagged: far from its source", "Question: How fast are refunds paid?",
                 "Expected answer: answer 1"):  # fmt: skip
        _visible(browser, dialog, text)
    choose_option(browser, dialog, "2. Case case-1", "exclude")
    choose_option(browser, dialog, outlier, "keep")
    resume_as(browser, dialog, "   ", "2-cases-blank-name")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    _visible(browser, dialog, "Not accepted, please correct:")
    _visible(browser, dialog, "NOT ACCEPTED, please correct: reviewer: give your name")
    assert form_select(dialog, "2. Case case-1").inner_text().strip() == "exclude"
    resume_as(browser, dialog, "Ada Lovelace", "2-cases")


def test_calibration_one_metric_at_a_time_each_answer_starting_at_its_verdict(
    review_run: tuple[str, ReviewRun, Path], browser: Any
) -> None:
    """Calibration, one metric at a time, four answers a form, each starting at the metric's verdict: on
    groundedness's first form the person flips the first answer, skips the second and asks for more of it; on
    the second goes on to the next metric; and marks that one (similarity) not meaningful."""
    api_url, run, _ = review_run
    ui = api_url.removesuffix("/api")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    _visible(browser, dialog, "refitted when the metric has 6 labels")
    _visible(browser, dialog, "Form 1: groundedness, answers 1-4 of its 10")
    _visible(browser, dialog, "6 more sampled answers of this metric")
    assert form_select(dialog, "Is groundedness meaningful for this system?").inner_text().strip() == (
        "meaningful: label its answers"
    )
    first = _field_titles(dialog, r"1\. groundedness says ")[0]
    assert first.startswith("1. groundedness says PASS (0.700 >= 0.700), case case-7")
    for text in ("Question: Question 7?", "Retrieved context: Passage 7 says refunds take 7 days.",
                 "Answer: actual 7", "Verdict: higher is better: 0.700 is at or above 0.700, so PASS"):  # fmt: skip
        _visible(browser, dialog, text)
    assert form_select(dialog, first).inner_text().strip() == "pass"
    choose_option(browser, dialog, first, "fail")
    choose_option(browser, dialog, "2. groundedness says", "skip")
    choose_option(browser, dialog, "How do you decide?", "review the items below, then show me more")
    resume_as(browser, dialog, "Ada Lovelace", "3-calibration-form-1")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    _visible(browser, dialog, "Form 2: groundedness, answers 5-8 of its 10")
    _visible(browser, dialog, "Next metric: similarity (answer_similarity)")
    choose_option(browser, dialog, "How do you decide?", "review the items below, then the next metric")
    resume_as(browser, dialog, "Ada Lovelace", "3-calibration-form-2")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    _visible(browser, dialog, "Expected answer: expected 5")  # similarity reads the expected answer
    choose_option(browser, dialog, "Is similarity (answer_similarity) meaningful for this system?",
                  "not meaningful for this system")  # fmt: skip
    resume_as(browser, dialog, "Ada Lovelace", "3-calibration-form-3")


def test_clusters_an_emptied_name_is_refused_then_renamed_and_the_run_completes(
    review_run: tuple[str, ReviewRun, Path], browser: Any
) -> None:
    """Clusters: the keyword names are proposed; one is emptied (refused), then renamed. The run completes,
    with the evaluations that ran beside the forms on the same server."""
    api_url, run, out = review_run
    ui = api_url.removesuffix("/api")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    _visible(browser, dialog, "Example questions: How fast are refunds paid?")
    name = dialog.get_by_label("2. Name of cluster 1 (2 failures) (Optional)")
    assert name.input_value() == "shipping, cost"
    name.fill("")  # emptied: the UI sends no value for it, which is refused, never read as the proposal
    resume_as(browser, dialog, "Ada Lovelace", "4-clusters-emptied")
    run.next_pause()
    dialog = open_resume_dialog(browser, ui, str(run.id))
    _visible(browser, dialog, "left empty: 2. Name of cluster 1 (2 failures)")
    name = dialog.get_by_label("2. Name of cluster 1 (2 failures) (Optional)")
    assert name.input_value() == "shipping, cost"  # shown again at the proposal
    name.fill("Shipping prices unknown")
    resume_as(browser, dialog, "Ada Lovelace", "4-clusters")

    run.process.wait(timeout=60)
    assert run.process.returncode == 0, run.log.read_text()[-3000:]
    evaluations = api(api_url, "/flow_runs/filter", {"flows": {"name": {"any_": ["evaluate"]}}})
    problems = (out / "evaluations.log").read_text(errors="replace")
    assert evaluations and "Traceback" not in problems, f"no evaluation ran beside the review:\n{problems[-2000:]}"
    assert {run["state"]["type"] for run in evaluations} <= {"RUNNING", "COMPLETED", "PENDING"}
    assert run.state()["type"] == "COMPLETED"
    assert browser.dialogs == [], "text from the corpus or the answers ran as script"


def test_the_stored_decisions_are_exactly_what_was_clicked(review_run: tuple[str, ReviewRun, Path]) -> None:
    _, _, out = review_run
    decisions = json.loads((out / "decisions.json").read_text())
    for step in ("topic-modeling", "test-validation", "calibration", "failure-clustering"):
        assert decisions[step]["reviewer"] == "Ada Lovelace"
        assert decisions[step]["source"] == "prefect-ui"
        assert decisions[step]["decided_by"] == "person"
    assert decisions["topic-modeling"]["decision"] == {"excluded_topic_ids": [1]}
    assert decisions["test-validation"]["decision"] == {"excluded_case_keys": ["case-1"]}
    assert sorted(decisions["test-validation"]["review"]["changed"]) == ["case-1", "case-3"]
    item = "groundedness/groundedness/sample-rag/case-{}".format
    calibration = decisions["calibration"]
    record = calibration["review"]
    # shown: groundedness's marker and 8 answers, similarity's marker and 4; offered: 2 markers and 20 answers
    assert (record["how"], record["forms"], record["shown"], record["offered"]) == ("reviewed item by item", 3, 14, 22)
    assert record["changed"] == [item(7), "answer_similarity/similarity"]
    assert record["skipped"] == [item(6)]
    assert calibration["decision"]["not_meaningful"] == ["answer_similarity/similarity"]
    labelled = set(calibration["decision"]["passed_item_ids"]) | set(calibration["decision"]["failed_item_ids"])
    assert len(labelled) == 7 and item(7) in calibration["decision"]["failed_item_ids"]
    assert all(label.startswith("groundedness/") for label in labelled)
    assert decisions["failure-clustering"]["decision"] == {
        "names": {"0": "refund, days, paid", "1": "Shipping prices unknown"},
        "kept_proposed": ["0"],
    }



def _field_titles(dialog: Any, pattern: str) -> list[str]:
    import re

    texts = [" ".join(text.split()) for text in dialog.locator("label").all_inner_texts()]
    titles = [text.removesuffix(" (Optional)") for text in texts if re.match(pattern, text)]
    assert titles, f"no field matches {pattern!r} among {texts}"
    return titles
