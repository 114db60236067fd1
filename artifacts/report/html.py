"""The HTML report of a run: an evaluation's sections; for an MRM run, an executive summary and the MRM
sections first (what a committee reads), the automated evaluation's sections after them, on the shared
self-contained page. Returns the interpretation too, so callers write the HTML and its JSON twin together."""

from typing import Any

from assay.artifacts.report.evaluation_sections import evaluation_sections
from assay.artifacts.report.interpretation import build_interpretation
from assay.artifacts.report.page import Section, render, render_page
from assay.artifacts.report.run_documents import RunDocuments


def render_report(run: RunDocuments) -> tuple[str, dict[str, Any]]:
    """(HTML document, interpretation) of an evaluation or MRM run, rendered from its documents only."""
    interpretation = build_interpretation(run)
    sections: list[Section] = evaluation_sections(interpretation)
    if run.kind == "mrm":
        from assay.artifacts.report.executive_summary import executive_summary
        from assay.artifacts.report.mrm_sections import mrm_sections

        summary = Section(
            "executive-summary",
            "Executive summary",
            render("mrm/executive.html.j2", part=executive_summary(interpretation)),
        )
        sections = [summary, *mrm_sections(run, interpretation.get("mrm")), *sections]
    overview = interpretation["overview"]
    kind = "MRM validation report" if run.kind == "mrm" else "Evaluation report"
    subtitle = f"run {overview['run_id'] or 'unknown'}, created {overview['created'] or 'unknown'}"
    html = render_page(
        f"{kind}: {overview['name']}",
        sections,
        subtitle=subtitle,
        data={"schema_version": interpretation["schema_version"], "run_id": overview["run_id"], "kind": run.kind},
    )
    return html, interpretation
