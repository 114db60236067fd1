"""Everything a system under test said is hostile: no markup from it survives into the report."""

from pathlib import Path

from assay.artifacts.report.html import render_report
from assay.artifacts.report.run_documents import read_folder

from tests.artifacts.report.report_lab import build_run
from tests.support.reports import unpacked


def test_hostile_text_is_escaped_and_megabyte_answers_truncated(tmp_path: Path) -> None:
    page, interpretation = render_report(read_folder(build_run(tmp_path / "run", hostile=True)))
    html = unpacked(page)
    assert "<script>alert(1)" not in html and "<img src=x" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "\x1b" not in html
    assert "(truncated, 100" in html
    assert len(page) < 8_000_000
    big = next(c for c in interpretation["cases"] if c["model_key"] == "leaky" and c["test_case_key"] == "tc-3")
    assert len(big["answer"]) > 1_000_000
