"""A committee member opens an MRM report offline on a laptop screen (1280x800): the executive summary (verdict,
run status, top risks, decisions) is on the first screen without scrolling; the packed figures and eval-eye
rows then unpack and draw; nothing leaves the page and nothing logs an error. The screenshot is kept under
.assay/test-screenshots/."""

from pathlib import Path

from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import read_folder

from tests.artifacts.report.committee_run import committee_run
from tests.artifacts.report.report_lab import build_sample_sized_run
from tests.support.browser import chromium_page, open_offline, skip_without_chromium

SCREEN = {"width": 1280, "height": 800}


def test_the_executive_summary_is_on_the_first_screen(tmp_path: Path) -> None:
    skip_without_chromium()
    from playwright.sync_api import expect

    html, _ = render_report(committee_run(tmp_path / "run"))
    report = tmp_path / "interpretation.html"
    report.write_text(html, encoding="utf-8")
    with chromium_page("committee-report", **SCREEN) as browser:
        page = browser.page
        refused = open_offline(browser, report)
        summary = page.locator("#executive-summary")
        expect(summary.get_by_role("heading", name="Executive summary")).to_be_visible()
        for part in (".verdict", ".run-status", "ol.risks", "table.exec-decisions thead"):
            element = summary.locator(part)
            expect(element).to_be_in_viewport()
            box = element.bounding_box()
            assert box is not None and box["y"] + box["height"] <= SCREEN["height"], f"{part} is below the first screen"
        whole = summary.bounding_box()
        assert whole is not None and whole["y"] + whole["height"] <= SCREEN["height"], f"summary ends at {whole}"
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the screen"
        expect(summary.locator(".run-status")).to_have_text("completed")
        expect(summary.locator("tr[data-step='calibration']")).to_contain_text("Bo Chen via approvals-file")
        page.screenshot(path=str(browser.folder / "first-screen.png"))

        expect(page.locator("#eye-rows > .eye-card")).to_have_count(6, timeout=30_000)
        figures = page.locator("div.plotly-graph-div[data-figure]")
        expect(page.locator("div.plotly-graph-div[data-figure] .main-svg").first).to_be_attached(timeout=30_000)
        expect(page.locator(".js-plotly-plot")).to_have_count(figures.count(), timeout=30_000)
        browser.shot("committee-report")
    assert refused == [] and browser.console_errors == [] and browser.dialogs == []


def test_the_eval_eye_draws_its_rows_a_page_at_a_time(tmp_path: Path) -> None:
    """240 rows unpacked, 25 drawn: the page stays a few screens tall until the reader asks for more."""
    skip_without_chromium()
    from playwright.sync_api import expect

    html, _ = render_report(read_folder(build_sample_sized_run(tmp_path / "run")))
    report = tmp_path / "interpretation.html"
    report.write_text(html, encoding="utf-8")
    with chromium_page("eval-eye-pages", **SCREEN) as browser:
        page = browser.page
        refused = open_offline(browser, report)
        cards = page.locator("#eye-rows > .eye-card")
        expect(cards).to_have_count(240, timeout=30_000)
        drawn = page.locator("#eye-rows > .eye-card:not(.eye-hidden):not(.eye-folded)")
        expect(drawn).to_have_count(25)
        expect(page.locator("#eye-count")).to_have_text("240 of 240 rows match, the first 25 shown")
        height = page.evaluate("document.documentElement.scrollHeight")
        page.get_by_role("button", name="Show 25 more of 215").click()
        expect(drawn).to_have_count(50)
        assert page.evaluate("document.documentElement.scrollHeight") > height
        page.select_option("#eye-model", "good")  # a new filter starts again at the first page
        expect(drawn).to_have_count(25)
        expect(page.locator("#eye-count")).to_have_text("120 of 240 rows match, the first 25 shown")
        expect(page.locator('#eye-rows > .eye-card[data-model="leaky"]:not(.eye-hidden)')).to_have_count(0)
        first = drawn.first
        expect(first.locator("details.eye-all-metrics")).not_to_have_attribute("open", "")
        page.select_option("#eye-metric", "text_matching/model_passes")  # the chosen metric shows unasked
        expect(first.locator("tr[data-metric='text_matching/model_passes']")).to_be_visible()
        page.locator("#eval-eye").scroll_into_view_if_needed()
        browser.shot("eval-eye-first-page")
    assert height < 60_000, f"the report is {height} px tall with the first page of rows"
    assert refused == [] and browser.console_errors == [] and browser.dialogs == []
