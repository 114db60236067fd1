"""The re-validation verdict artifact as an operator reads it in Prefect's default UI (V1) at 1280x800: a failed
week whose model key, error and problem hold Markdown ("|", brackets, a link, HTML) is drawn as written, with no
HTML entity shown literally (V1 decodes only a few named ones) and no table wider than its pane (V1 scrolls a
wider one inside the page, its right columns out of sight). The artifact is the one ``assess`` writes, stored on
a real Prefect server. Screenshots (viewport) are kept under
``.assay/test-screenshots/test_the_verdict_artifact_reads_cleanly_in_the_default_ui/``."""

from datetime import UTC, datetime
from pathlib import Path

import pytest
from assay.artifacts.failed_requests import failed_requests_limit
from assay.artifacts.gates import parse_gates
from assay.artifacts.revalidation import assess

from assay.models.revalidation import BaselineApproval
from tests.support.browser import chromium_page, skip_without_chromium
from tests.support.fake_runs import fake_run, problem
from tests.support.prefect_server import running_prefect_server

pytestmark = pytest.mark.timeout(300)
TEST = "test_the_verdict_artifact_reads_cleanly_in_the_default_ui"
MODEL = "rag|v2 [docs](javascript:alert(1)) <b>bold</b>"
ERROR = "HTTP 500 | upstream [down]"
CASES = [f"c{index}" for index in range(40)]


def _verdict_markdown() -> str:
    """A failed week: a gate breached, 3 of 40 requests failed, groundedness worse than the baseline's."""
    scores = {case: 0.1 if index < 8 else 0.9 for index, case in enumerate(CASES)}
    for case in CASES[-3:]:
        scores[case] = None
    current = fake_run("week-2", {MODEL: scores}, problems=[problem("high", model=MODEL)])
    current.documents["summary.json"]["models"][0] |= {"answered": 37, "host_failures": 3}
    current.documents["groundedness/results.json"]["results"][-1]["error"] = ERROR
    baseline = fake_run("week-1", {MODEL: dict.fromkeys(CASES, 0.9)}, problems=[problem("medium", model=MODEL)])
    approval = BaselineApproval(name="production-revalidation", run_id="week-1", approved_by="Ana Lima",
                                source="person", approved_at=datetime.now(UTC))  # fmt: skip
    verdict, _, markdown = assess(
        "production-revalidation", current, baseline=(approval, baseline), gates=parse_gates(["groundedness>=0.9"]),
        fail_on="high", fail_on_regression=True, failed_requests=failed_requests_limit(None),
    )  # fmt: skip
    assert verdict.verdict == "fail" and len(verdict.reasons) == 4, verdict.reasons
    return markdown


def _stored(api_url: str, markdown: str) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import ArtifactCreate
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api_url}), get_client(sync_client=True) as client:
        artifact = client.create_artifact(
            ArtifactCreate(key="revalidation-production-revalidation", type="markdown", data=markdown)
        )
    return str(artifact.id)


def test_the_verdict_artifact_reads_cleanly_in_the_default_ui(tmp_path: Path) -> None:
    skip_without_chromium()
    markdown = _verdict_markdown()
    with running_prefect_server(tmp_path) as api_url, chromium_page(TEST, width=1280, height=800) as browser:
        page = browser.page
        page.goto(f"{api_url.removesuffix('/api')}/artifacts/artifact/{_stored(api_url, markdown)}")
        article = page.locator(".artifact-data-markdown").first
        article.locator("h1", has_text="Re-validation production-revalidation: FAILED").wait_for(timeout=60_000)
        page.screenshot(path=str(browser.folder / "verdict.png"))
        drawn = " ".join(article.inner_text().split())
        assert "&#" not in drawn and "&amp;" not in drawn, drawn
        for written in (MODEL, ERROR, "Failed requests: 3 of 40 (7.5%); limit 5% (the default)",
                        "95% interval from -"):  # fmt: skip
            assert written in drawn, (written, drawn[:1500])
        assert article.locator("a, b").count() == 0  # the model key's link and HTML are text
        tables = article.locator(".p-table")
        assert tables.count() == 2  # gates and significant changes; the rest are lists
        for index in range(tables.count()):
            scroll, client = tables.nth(index).evaluate("table => [table.scrollWidth, table.clientWidth]")
            assert scroll <= client + 1, f"table {index} is {scroll} px wide in a {client} px pane: clipped"
        assert browser.dialogs == []
