"""A report the size of the sample bank's MRM run stays under 3 MB: plotly.js is embedded once, packed; the
figures and the eval eye's rows are packed data the page unpacks, not markup parsed before the first screen.
(Before packing, the sample MRM report was 11.3 MB: 4.8 MB of plotly.js and 4.9 MB of eval-eye markup.)"""

import pytest
from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import MRM_EVALUATION, RunDocuments, read_folder

from tests.artifacts.report.mrm_export import mrm_export
from tests.artifacts.report.report_lab import build_sample_sized_run
from tests.support.reports import unpacked

MAX_BYTES = 3_000_000


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    evaluation = read_folder(build_sample_sized_run(tmp_path_factory.mktemp("sized") / MRM_EVALUATION))
    documents = {name: doc for name, doc in mrm_export().items() if not name.startswith(f"{MRM_EVALUATION}/")}
    documents |= {f"{MRM_EVALUATION}/{name}": doc for name, doc in evaluation.documents.items()}
    html, _ = render_report(RunDocuments(source="sized", documents=documents))
    return html


def test_a_sample_sized_mrm_report_is_at_most_3_mb(page: str) -> None:
    shown = unpacked(page)
    assert shown.count('class="eye-card') == 240  # every row is in the report...
    assert len(shown.encode()) > MAX_BYTES  # ...which as plain markup, even without plotly.js, would be too big
    assert len(page.encode()) <= MAX_BYTES


def test_plotly_is_embedded_once_and_rows_and_figures_are_packed(page: str) -> None:
    assert page.count('id="plotly-packed"') == 1
    assert "Plotly.newPlot(" in page and page.count("Plotly.newPlot(") == 1  # one drawing loop, no per-figure script
    assert 'class="eye-card' not in page  # rows are unpacked by the page, not parsed up front
    assert page.count("data-figure=") == unpacked(page).count('class="plotly-graph-div"') > 10
