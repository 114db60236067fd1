"""A person answers the MRM review pauses in Prefect's default UI (V1, at the server's root), in chromium at
1280x800, by clicking; every item's evidence must be drawn where they read it, and the flow must store exactly
what they clicked.

A real Prefect server runs the small review flow (``tests.browser.review_flow``: all four reviews on synthetic
step outputs, corpus text with markup in it) in a subprocess. For each pause the test opens the run's page,
Resume, the "Resume Flow Run" modal, and checks that every item's title and its evidence paragraphs ("Keywords:",
"Example chunk:", "Question:", "Answer:", "Verdict:"...) and the first field's form and count lines have a
non-zero box inside the modal once scrolled to, covered by nothing (``tests.browser.v1_forms``). Then, as the
full MRM run's reviews were answered: topics, review the items and exclude one; cases, the flagged outlier shown
as proposed for exclusion, and every proposal accepted as shown; calibration, one metric a form: groundedness
("meaningful" as shown, its answers each at the metric's verdict), labelled as a person whose line sits one
answer off the metric's threshold, then "the next metric", similarity labelled the same way, then stop;
clusters, the first renamed. Each form is submitted with the reviewer's name. The flow must go on to the next
form and finish, and ``decisions.json`` must hold exactly those clicks (the excluded topic, the accepted cases,
every label and which were changed, the cluster's name), credited to the person through the Prefect UI. No
text ran as script, no request of the UI failed but known harmless ones, no console error. The V2 interface is
driven by ``test_review_forms.py``; the Run form and a real MRM run's first pause by
``test_mrm_deployment_run.py``. Screenshots (viewport, 1280x800) are kept under
``.assay/test-screenshots/test_review_forms_in_prefects_v1_ui/``.
"""

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.flows.review_forms import ACCEPT, BULK_TITLE, MEANINGFUL, NEXT_GROUP, REVIEW

from tests.browser.review_flow import ReviewRun
from tests.browser.v1_forms import (
    CALIBRATION,
    CASES,
    CLUSTERS,
    MARKER,
    TOPICS,
    Form,
    assert_ran_clean,
    labels_one_answer_off,
    open_review_form,
    shot,
    verdicts_of,
    watch_network,
)
from tests.support.browser import (
    Browser,
    chromium_page,
    skip_without_chromium,
    v1_choose_option,
    v1_field,
    v1_select_value,
    v1_submit_as,
)
from tests.support.prefect_server import running_prefect_server, server_environment

pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[2]
TEST = "test_review_forms_in_prefects_v1_ui"
REVIEWER = "Grace Hopper"
CLUSTER_NAME = "Refund timing questions"
# the review flow's calibration answers: "<evaluator>/<metric>/sample-rag/<case>", by the marker's metric
METRIC_ITEM = {
    "groundedness": "groundedness/groundedness",
    "similarity (answer_similarity)": "answer_similarity/similarity",
}


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ReviewRun, Path]]:
    skip_without_chromium()
    home = tmp_path_factory.mktemp("prefect")
    out = tmp_path_factory.mktemp("review")
    with running_prefect_server(home) as api_url:
        env = {**server_environment(home, api_url), "ASSAY_HOME": str(out / "assay-home")}
        log = out / "flow.log"
        with open(log, "wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.browser.review_flow", str(out)],
                cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            yield api_url.removesuffix("/api"), ReviewRun(api_url, process, log), out
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()


def _next_form(browser: Browser, ui: str, run: ReviewRun) -> Form:
    number = run.next_pause()
    return open_review_form(browser, ui, run.id, number)


def _case_of(title: str) -> str:
    return re.search(r", case (\S+?)(?:[,:]|$)", title).group(1)


def test_review_forms_in_prefects_v1_ui(review_run: tuple[str, ReviewRun, Path]) -> None:
    ui, run, out = review_run
    with chromium_page(TEST, width=1280, height=800) as browser:
        failed_requests = watch_network(browser)

        topics = _next_form(browser, ui, run)
        assert topics.review == TOPICS and topics.offered == [REVIEW, ACCEPT], topics
        assert len(topics.titles) == 3 and topics.counts.startswith("Every one of the 3 topics"), topics
        assert topics.dialog.locator("script").count() == 0, "corpus text must not become markup"
        v1_choose_option(browser, topics.dialog, BULK_TITLE, REVIEW)
        (excluded,) = [title for title in topics.titles if title.startswith("2. Topic 1: shipping")]
        v1_choose_option(browser, topics.dialog, excluded, "exclude")
        v1_submit_as(browser, topics.dialog, REVIEWER, "1-topics-answered")

        cases = _next_form(browser, ui, run)
        assert cases.review == CASES and ACCEPT in cases.offered, cases
        shown_cases = {title: v1_select_value(cases.dialog, title) for title in cases.titles}
        outlier = "1. Case case-3: flagged outlier, proposed exclude"
        assert shown_cases[outlier] == "exclude" and list(shown_cases.values()).count("exclude") == 1, shown_cases
        v1_choose_option(browser, cases.dialog, BULK_TITLE, ACCEPT)
        v1_submit_as(browser, cases.dialog, REVIEWER, "2-cases-answered")

        labels: dict[str, str] = {}  # item id -> the label the person left
        flipped: list[str] = []  # item ids labelled against the metric's verdict
        markers: list[str] = []
        form = _next_form(browser, ui, run)
        while form.review == CALIBRATION:
            metric = MARKER.match(form.marker).group(1)
            markers.append(metric)
            assert v1_select_value(form.dialog, form.marker) == MEANINGFUL
            verdicts = verdicts_of(form)
            for title, (verdict, _) in verdicts.items():  # each answer starts at the metric's verdict
                assert v1_select_value(form.dialog, title) == verdict, title
            for title, label in labels_one_answer_off(verdicts).items():
                item = f"{METRIC_ITEM[metric]}/sample-rag/{_case_of(title)}"
                labels[item] = label
                if label != verdicts[title][0]:
                    v1_choose_option(browser, form.dialog, title, label)
                    flipped.append(item)
            v1_field(form.dialog, form.titles[0]).scroll_into_view_if_needed()
            shot(browser, f"3-calibration-{len(markers)}-labelled")
            next_metric = len(markers) == 1  # groundedness first; then the next metric, and stop there
            if next_metric:
                assert NEXT_GROUP in form.offered and "Next metric: " in form.counts, (form.offered, form.counts)
            v1_choose_option(browser, form.dialog, BULK_TITLE, NEXT_GROUP if next_metric else REVIEW)
            v1_submit_as(browser, form.dialog, REVIEWER, f"3-calibration-{len(markers)}-answered")
            form = _next_form(browser, ui, run)
        assert markers == ["groundedness", "similarity (answer_similarity)"], markers
        assert len(flipped) == 2, flipped

        assert form.review == CLUSTERS and form.offered == [REVIEW, ACCEPT], form
        cluster_title = form.titles[0]
        cluster_box = v1_field(form.dialog, cluster_title).locator("textarea")
        assert cluster_box.input_value() == "refund, days, paid", "the keyword name should be proposed"
        v1_choose_option(browser, form.dialog, BULK_TITLE, REVIEW)
        cluster_box.fill(CLUSTER_NAME)
        v1_submit_as(browser, form.dialog, REVIEWER, "4-clusters-answered")

        run.process.wait(timeout=60)
        assert run.process.returncode == 0, run.log.read_text()[-3000:]
        assert run.state()["type"] == "COMPLETED"
        assert len(run.seen) == 5, run.seen  # topics, cases, two calibration forms, clusters: no form asked again
        assert "/v2/" not in browser.page.url
        assert_ran_clean(browser, failed_requests)

    decisions = json.loads((out / "decisions.json").read_text())
    steps = ("topic-modeling", "test-validation", "calibration", "failure-clustering")
    assert {step: (d["reviewer"], d["source"], d["decided_by"]) for step, d in decisions.items()} == dict.fromkeys(
        steps, (REVIEWER, "prefect-ui", "person")
    )
    reviews = {step: decision["review"] for step, decision in decisions.items()}
    assert {step: (r["how"], r["forms"]) for step, r in reviews.items()} == {
        "topic-modeling": ("reviewed item by item", 1),
        "test-validation": ("accepted the proposals", 1),
        "calibration": ("reviewed item by item", 2),
        "failure-clustering": ("reviewed item by item", 1),
    }
    assert decisions["topic-modeling"]["decision"] == {"excluded_topic_ids": [1]}
    assert reviews["topic-modeling"]["changed"] == ["1"]
    assert decisions["test-validation"]["decision"] == {"excluded_case_keys": ["case-3"]}
    assert reviews["test-validation"]["changed"] == [] and reviews["test-validation"]["shown"] == len(shown_cases)

    calibration = decisions["calibration"]
    record = calibration["review"]
    assert sorted(record["changed"]) == sorted(flipped) and record["skipped"] == []
    assert record["shown"] == len(labels) + len(markers) == 10, record  # 4 answers and the marker, per form
    passed = sorted(item for item, label in labels.items() if label == "pass")
    failed = sorted(item for item, label in labels.items() if label == "fail")
    assert sorted(calibration["decision"]["passed_item_ids"]) == passed
    assert sorted(calibration["decision"]["failed_item_ids"]) == failed
    assert calibration["decision"].get("not_meaningful", []) == []

    cluster_id = re.match(r"1\. Name of cluster (\d+) ", cluster_title).group(1)
    assert decisions["failure-clustering"]["decision"] == {
        "names": {"0": "refund, days, paid", "1": "shipping, cost"} | {cluster_id: CLUSTER_NAME},
        "kept_proposed": [key for key in ("0", "1") if key != cluster_id],
    }
    assert reviews["failure-clustering"]["changed"] == [cluster_id]
