"""The report's summary in the Prefect UI: problems, the informative failing metrics, the path and the command;
never a file:// link, and text from the run cannot become Markdown structure."""

from assay.artifacts.report.summary_markdown import report_summary_markdown


def test_the_summary_names_what_fails_and_where_the_report_is() -> None:
    interpretation = {
        "problem_counts": {"high": 2, "medium": 1, "low": 0},
        "headline": [
            {"text": "Groundedness: 8 of 40 below 0.53", "failing": 8, "informative": True},
            {"text": "BLEU-1: 39 of 40 below 0.50", "failing": 39, "informative": False},
            {"text": "PII leakage: 0 of 40 above 0", "failing": 0, "informative": True},
        ],
    }
    markdown = report_summary_markdown(
        "MRM report [x](http://evil)", "run-1", "/exports/run-1/r.html", "mrm/r", interpretation
    )
    lines = markdown.splitlines()
    assert lines[0].startswith("# MRM report") and "](http" not in markdown
    assert "- Problems: 2 high, 1 medium, 0 low" in lines
    assert "- Fails: Groundedness: 8 of 40 below 0.53" in lines
    assert "- Fails on nearly every row (not informative on this suite): BLEU-1: 39 of 40 below 0.50" in lines
    assert "`/exports/run-1/r.html`" in markdown and "`assay artifacts get mrm/r --out report.html`" in markdown
    assert "file://" not in markdown


def test_without_an_interpretation_it_still_says_where_the_report_is() -> None:
    markdown = report_summary_markdown("Evaluation report", "run-2", "/tmp/r.html", "e/r", {})
    assert "Problems" not in markdown and "`/tmp/r.html`" in markdown
