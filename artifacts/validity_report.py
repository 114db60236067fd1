"""The validity page: how well each evaluator metric separated the answers people labelled acceptable from the
rest, next to the one-line baselines, as a self-contained offline page in the layout of every Assay report
(``artifacts.report.page``). Ids, reasons and file names came from the user's file, so templates escape them."""

from assay.artifacts.report.page import Section, render, render_page
from markupsafe import Markup

from assay.models.validity import MetricValidity, ValidityReport

MAX_UNSCORED_SHOWN = 50


def _baselines(report: ValidityReport) -> list[MetricValidity]:
    return [figure for metrics in report.baselines.values() for figure in metrics.values()]


def _evaluator_section(
    evaluator_id: str, metrics: dict[str, MetricValidity], baselines: list[MetricValidity]
) -> Section:
    children = [
        Section(
            f"evaluator-{evaluator_id}-{key}",
            f"{figure.display_name} ({key})",
            render("validity/metric.html.j2", figure=figure, baselines=baselines, limit=MAX_UNSCORED_SHOWN),
        )
        for key, figure in metrics.items()
    ]
    intro = Markup('<p class="muted">{} metric(s), each against the baselines.</p>').format(len(metrics))
    return Section(f"evaluator-{evaluator_id}", f"Evaluator: {evaluator_id}", intro, children)


def validity_html(report: ValidityReport) -> str:
    baselines = _baselines(report)
    rows = [("evaluator", figure) for metrics in report.evaluators.values() for figure in metrics.values()]
    rows += [("baseline", figure) for figure in baselines]
    sections = [
        Section(
            "summary",
            "Summary",
            render(
                "validity/summary.html.j2",
                report=report,
                metrics=sum(len(metrics) for metrics in report.evaluators.values()),
            ),
        ),
        Section(
            "how-to-read",
            "How to read this page",
            render("validity/how_to_read.html.j2", resamples=report.bootstrap.get("resamples", 0)),
        ),
        Section("auc", "ROC-AUC of every score", render("validity/auc_table.html.j2", rows=rows, table_id="auc-table")),
        *[_evaluator_section(evaluator_id, metrics, baselines) for evaluator_id, metrics in report.evaluators.items()],
        Section(
            "baselines",
            "Baselines",
            render(
                "validity/auc_table.html.j2",
                rows=[("baseline", figure) for figure in baselines],
                table_id="baseline-table",
            ),
            [
                Section(
                    f"baseline-{figure.metric}",
                    figure.display_name,
                    render("validity/metric.html.j2", figure=figure, baselines=[], limit=MAX_UNSCORED_SHOWN),
                )
                for figure in baselines
            ],
        ),
        Section("unavailable", "Not scored", render("validity/unavailable.html.j2", unavailable=report.unavailable)),
    ]
    subtitle = f"{report.rows} labelled answers from {report.labels_file}"
    return render_page(
        "Assay evaluator validity", sections, subtitle=subtitle, with_charts=False, generated_at=report.generated_at
    )
