"""A validator starts the MRM workflow on their own corpus from the served deployment's Run form in Prefect's
default UI (V1, at the server's root) at 1280x800, by clicking and typing; the run is created with exactly what
they typed, opens from the deployment's Runs tab, and its first review form opens with its items.

A real Prefect server and ``python -m assay.deployments.serve --deployment mrm-workflow/interactive`` run in
subprocesses. The test opens Deployments -> interactive -> Run -> Custom run, switches ``corpus`` from None to a
string and types a small corpus's folder (``assay.testing.processes.small_corpus``), types three offline
evaluators, one case per topic, keeps one variation perturbator (the other two deleted) and adds one adversarial
one, and submits. The run the deployment's Runs tab opens must be the one the form created, with exactly those
parameters (read through the API). Once the run pauses at its first review (topics), that form must open in V1
with its items: every topic's title and evidence ("Keywords:", "Example chunk:") and the first field's form and
count lines drawn inside the modal, covered by nothing (``tests.browser.v1_forms``). The run is then cancelled
through the API. No request of the UI failed but known harmless ones, no console error.

Answering every review by clicking in V1 (titles, evidence, labels, the "meaningful" question, what reaches the
stored decisions) is ``test_review_forms_v1.py`` on the small review flow; a whole MRM run answered review by
review through the API, with its exports, is ``tests/server/test_mrm_workflow.py``; an MRM run's export bundled
and verified offline (and a tampered copy refused) is ``tests/server/test_mrm_bundle.py``. Screenshots (viewport,
1280x800) are kept under ``.assay/test-screenshots/test_mrm_run_form_starts_a_run_on_a_typed_corpus_in_v1/``.
"""

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.flows.review_forms import ACCEPT, REVIEW
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from assay.testing.processes import small_corpus
from tests.browser.v1_forms import TOPICS, assert_ran_clean, open_review_form, shot, watch_network
from tests.support.browser import (
    Browser,
    chromium_page,
    skip_without_chromium,
    toggle_choices,
    v1_choices_trigger,
    v1_field,
)
from tests.support.prefect_server import ServedDeployment, api, run_created_by_form, serving_deployment

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[2]
TEST = "test_mrm_run_form_starts_a_run_on_a_typed_corpus_in_v1"
WIDTH, HEIGHT = 1280, 800
EVALUATORS = ["groundedness", "answer_semantic_similarity", "text_matching"]
WAIT_S = 300  # until the first pause: chunking and topic modelling of the small corpus
FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}

Served = ServedDeployment


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    skip_without_chromium()
    home = tmp_path_factory.mktemp("prefect")
    base = tmp_path_factory.mktemp("mrm-deployment")
    with serving_deployment("mrm-workflow/interactive", home, base, REPO) as deployment:
        yield deployment


def _array_items(parameter: object) -> object:
    return parameter.locator(".p-draggable-list__item")


def _submit_run(browser: Browser, served: Served, corpus: Path) -> str:
    """Deployments -> interactive -> Run -> Custom run in V1; a small run on ``corpus``, submitted; the id of the
    run opened from the deployment's Runs tab, checked to be the one the form created."""
    page = browser.page
    page.goto(f"{served.ui}/deployments")
    page.get_by_role("link", name="interactive").first.click()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Custom run", exact=True).click()
    page.get_by_text("Run Name", exact=True).wait_for()

    folder = v1_field(page, "corpus (Optional)", exact=True)
    assert folder.get_by_role("button", name="None", exact=True).get_attribute("aria-selected") == "true"
    folder.get_by_role("button", name="str", exact=True).click()  # the packaged sample by default: a path instead
    box = folder.locator("input, textarea").first
    box.press_sequentially(str(corpus))
    expect(box).to_have_value(str(corpus))

    evaluators = v1_field(page, "evaluators (Optional)", exact=True)
    evaluators.get_by_role("button", name="list", exact=True).click()
    toggle_choices(page, v1_choices_trigger(evaluators), EVALUATORS)  # a multi-select of the registered ids

    v1_field(page, "Per Topic (Optional)", exact=True).locator("input").fill("1")

    variations = v1_field(page, "Variation Perturbators (Optional)", exact=True)
    expect(v1_choices_trigger(variations)).to_contain_text("random_keyboard_typos")  # the three defaults
    toggle_choices(page, v1_choices_trigger(variations), ["random_keyboard_typos", "word_swap"])  # keep comma
    expect(v1_choices_trigger(variations)).not_to_contain_text("word_swap")

    adversarial = v1_field(page, "Adversarial Perturbators (Optional)", exact=True)
    toggle_choices(page, v1_choices_trigger(adversarial), ["base64"])

    run_name = page.locator(".flow-run-name-input input").input_value()  # V1's label names no input (no id)
    assert run_name
    shot(browser, "0-run-form")
    page.get_by_role("button", name="Submit", exact=True).click()
    created = run_created_by_form(served.api_url, run_name, served.log)
    # V1 goes back to the deployment's Runs tab, where the new run is listed under its name. On a loaded machine
    # the list can lag behind the API by more than Playwright's 30 s, so the person reloads the tab.
    for attempt in range(1, 4):
        try:
            page.get_by_role("link", name=run_name, exact=True).first.click(timeout=20_000)
            page.wait_for_url(re.compile(r"/runs/flow-run/[0-9a-f-]{36}"), timeout=20_000)
            break
        except PlaywrightTimeoutError:
            shot(browser, f"0-runs-tab-without-the-run-{attempt}")
            page.reload()
    else:
        raise AssertionError(f"the run {run_name!r} ({created}) never opened from the deployment's Runs tab")
    shot(browser, "0-run-page")
    opened = re.search(r"/runs/flow-run/([0-9a-f-]{36})", page.url).group(1)
    assert opened == created, f"the form opened {opened}, it created {created} ({run_name!r})"
    assert "/v2/" not in page.url
    return opened


def _state(served: Served, flow_run_id: str) -> dict:
    return api(served.api_url, f"/flow_runs/{flow_run_id}")["state"]


def _wait_for(served: Served, flow_run_id: str, wanted: set[str], what: str) -> dict:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        state = _state(served, flow_run_id)
        if state["type"] in wanted:
            return state
        assert state["type"] not in FINAL, f"the run ended ({state['type']}: {state['message']}) before {what}"
        assert served.process.poll() is None, f"serve exited before {what}:\n{served.tail()}"
        time.sleep(1)
    raise AssertionError(f"no {what} within {WAIT_S} s:\n{served.tail()}")


def test_mrm_run_form_starts_a_run_on_a_typed_corpus_in_v1(served: Served, tmp_path: Path) -> None:
    corpus = small_corpus(tmp_path / "corpus")
    with chromium_page(TEST, width=WIDTH, height=HEIGHT) as browser:
        failed_requests = watch_network(browser)
        flow_run_id = _submit_run(browser, served, corpus)
        parameters = api(served.api_url, f"/flow_runs/{flow_run_id}")["parameters"]
        assert parameters["corpus"] == str(corpus), parameters.get("corpus")
        assert parameters["evaluators"] == EVALUATORS
        assert parameters["test_generation"]["per_topic"] == 1
        assert parameters["robustness"]["variation_perturbators"] == ["comma"], parameters
        assert parameters["robustness"]["adversarial_perturbators"] == ["base64"]
        assert parameters["interactive"] is True

        started = time.monotonic()
        _wait_for(served, flow_run_id, {"PAUSED"}, "the topics review")
        paused_after = time.monotonic() - started
        topics = open_review_form(browser, served.ui, flow_run_id, 1)
        assert topics.review == TOPICS and topics.offered == [REVIEW, ACCEPT], topics
        assert 1 <= len(topics.titles) <= parameters["review"]["page_size"], topics.titles
        assert re.match(r"\d+ more topics are not shown: the proposals keep|Every one of the", topics.counts)
        topics.dialog.get_by_role("button", name="Close", exact=True).click()
        expect(topics.dialog).to_be_hidden()

        api(served.api_url, f"/flow_runs/{flow_run_id}/set_state", {"state": {"type": "CANCELLING"}, "force": True})
        state = _wait_for(served, flow_run_id, FINAL, "the cancellation")
        assert state["type"] == "CANCELLED", state
        print(f"\n{TEST}: the topics review after {paused_after:.0f} s; cancelled")
        assert "/v2/" not in browser.page.url
        assert_ran_clean(browser, failed_requests)
