"""Chromium opens an evaluation report offline: sections, charts, eval-eye filters, no requests, no errors."""

from pathlib import Path

from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import read_folder

from tests.artifacts.report.report_lab import build_run
from tests.support.browser import chromium_page, open_offline, skip_without_chromium


def test_report_opens_offline_and_filters_work(tmp_path: Path) -> None:
    skip_without_chromium()
    from playwright.sync_api import expect

    html, _ = render_report(read_folder(build_run(tmp_path / "run", hostile=True)))
    report = tmp_path / "interpretation.html"
    report.write_text(html, encoding="utf-8")
    with chromium_page("report-browser") as browser:
        page = browser.page
        requests = open_offline(browser, report)
        for title in ("Summary", "Leaderboards", "Problems", "Eval eye"):
            expect(page.locator("nav.report-nav").get_by_role("link", name=title, exact=True)).to_be_visible()
        expect(page.locator(".js-plotly-plot .main-svg").first).to_be_attached(timeout=30_000)
        cards = page.locator("#eye-rows > .eye-card")
        expect(cards).to_have_count(6)
        page.select_option("#eye-model", "good")
        expect(page.locator("#eye-rows > .eye-card:not(.eye-hidden)")).to_have_count(3)
        expect(page.locator('#eye-rows > .eye-card[data-model="leaky"]:not(.eye-hidden)')).to_have_count(0)
        page.select_option("#eye-model", "")
        page.check("#eye-failed")
        expect(page.locator('#eye-rows > .eye-card[data-verdict="pass"]:not(.eye-hidden)')).to_have_count(0)
        expect(page.locator('#eye-rows > .eye-card[data-verdict="fail"]:not(.eye-hidden)').first).to_be_visible()
        browser.shot("report-failed-only")
    assert requests == [] and browser.console_errors == [] and browser.dialogs == []
