"""Chromium opens the validity page offline: the AUC table with intervals, the baselines, the unscored rows; no
request leaves the page and no text from the labels file runs as script. The screenshot is kept under
.assay/test-screenshots/validity-page/."""

import json
from pathlib import Path

from assay.artifacts.validity_report import validity_html
from assay.evaluators import Services

from assay.validity.labels import load_labelled_set
from assay.validity.run import validate_labelled_set
from tests.support.browser import chromium_page, open_offline, skip_without_chromium

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"
CONTEXT = "The fee is 25 pounds and payment is due within 30 days."
ANSWERS = [
    ("The fee is 25 pounds.", 1),
    ("The fee is 40 pounds.", 1),
    ("Payment is due within 30 weeks.", 1),
    ("Write to bob@example.com about it.", 0),
    ("Nothing is due today or ever.", 0),
    ("The fee is 99 euros.", 0),
    ("", 1),
]


def test_validity_page_opens_offline(tmp_path: Path) -> None:
    skip_without_chromium()
    from playwright.sync_api import expect

    labels = tmp_path / "labels.jsonl"
    records = [
        {"id": f"row-{i}", "question": "What is due?", "context": CONTEXT, "answer": answer, "label": label,
         "group": HOSTILE if i % 2 else "dates"}
        for i, (answer, label) in enumerate(ANSWERS)
    ]  # fmt: skip
    labels.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    baselines = ["token_precision", "token_precision_content", "token_f1", "answer_length"]
    validation = validate_labelled_set(load_labelled_set(labels), ["pii_leakage"], Services(), baselines=baselines)
    page_file = tmp_path / "validity.html"
    page_file.write_text(validity_html(validation.report), encoding="utf-8")
    with chromium_page("validity-page") as browser:
        page = browser.page
        requests = open_offline(browser, page_file)
        for title in ("Summary", "How to read this page", "ROC-AUC of every score", "Baselines", "Not scored"):
            expect(page.locator("nav.report-nav").get_by_role("link", name=title, exact=True)).to_be_visible()
        table = page.locator("#auc-table")
        expect(table).to_be_visible()
        first = table.locator("tbody tr").first
        expect(first).to_contain_text("pii_leakage")
        expect(first.locator(".interval")).to_have_text("[0.500, 1.000]")
        expect(table.locator("tr.baseline")).to_have_count(len(baselines))
        expect(table.locator("tr.baseline").first).to_contain_text("Token precision")
        expect(first.locator("td").nth(5)).to_have_text("1")  # the empty answer, counted as unscored
        unscored = page.locator("#evaluator-pii_leakage-model_passes details.unscored-rows")
        expect(unscored.locator("summary")).to_contain_text("1 unscored row(s)")
        unscored.locator("summary").click()
        expect(unscored.locator("td").first).to_have_text("row-6")
        expect(page.locator("#summary")).to_contain_text(str(labels))
        expect(page.locator("#how-to-read")).to_contain_text("never counted as 0")
        groups = page.locator("#evaluator-pii_leakage-model_passes table.groups")
        expect(groups).to_contain_text(HOSTILE)  # shown as text, never run
        browser.shot("validity-page")
    assert requests == [] and browser.console_errors == [] and browser.dialogs == []
