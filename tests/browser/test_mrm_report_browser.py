"""The MRM sections as a person sees them: the rendered page opened offline in chromium draws every chart,
switches the weakness grid's metric, follows the navigation (to the calibration and evaluator validity
sections), runs no injected script and logs no error.
The screenshot is kept under .assay/test-screenshots/."""

from pathlib import Path

from assay.artifacts.report.mrm_sections import mrm_interpretation, mrm_sections
from assay.artifacts.report.page import render_page
from assay.artifacts.report.run_documents import RunDocuments

from tests.artifacts.report.mrm_export import mrm_export
from tests.support.browser import chromium_page, skip_without_chromium


def test_mrm_sections_render_in_a_browser(tmp_path: Path) -> None:
    skip_without_chromium()
    from playwright.sync_api import expect

    documents = mrm_export()
    weaknesses = documents["weakness-detection/weaknesses.json"]
    second = {**weaknesses["metrics"][0], "evaluator_id": "rouge", "metric": "rouge_l"}
    documents["weakness-detection/weaknesses.json"] = {**weaknesses, "metrics": [weaknesses["metrics"][0], second]}
    run = RunDocuments(source="test", documents=documents)
    data = mrm_interpretation(run)
    page_file = tmp_path / "mrm.html"
    page_file.write_text(render_page("MRM run", mrm_sections(run, data), data={"mrm": data}), encoding="utf-8")

    with chromium_page("mrm-report") as browser:
        page = browser.page
        requests: list[str] = []
        page.on("request", lambda request: request.url.startswith("file://") or requests.append(request.url))
        page.goto(page_file.as_uri())
        charts = page.locator(".js-plotly-plot")
        expect(charts).to_have_count(4)
        for index in range(4):
            expect(charts.nth(index).locator(".main-svg").first).to_be_visible()
        expect(page.locator("#mrm-topics .js-plotly-plot g.point")).to_have_count(2)

        grid = page.locator("#mrm-weaknesses .js-plotly-plot")
        grid.locator(".updatemenu-header").click()
        grid.locator(".updatemenu-dropdown-button", has_text="rouge / rouge_l").click()
        expect(grid.locator(".updatemenu-header-group .updatemenu-item-text")).to_have_text("rouge / rouge_l")
        shown = grid.evaluate("element => element.data.map(trace => trace.visible)")
        assert shown == [False, True]

        page.get_by_role("link", name="Calibration").click()
        expect(page.locator("#mrm-calibration")).to_contain_text("Thresholds were refitted on labels given by Bo Chen")
        expect(page.locator("#mrm-robustness-adversarial")).to_contain_text("step not run / no output")

        page.get_by_role("link", name="Evaluator validity").click()
        validity = page.locator("#mrm-validity")
        expect(validity.locator("tr[data-metric='groundedness/groundedness']").first).to_be_visible()
        expect(validity).to_contain_text("0.875 [0.625, 1.000] at 0.620")
        expect(validity).to_contain_text("reviewer labels (Bo Chen), MRM step 5")
        browser.shot("mrm-sections")

    assert browser.console_errors == []
    assert browser.dialogs == []  # no hostile script or handler ran
    assert requests == []  # nothing left the page
