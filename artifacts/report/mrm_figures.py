"""The charts of the MRM sections, drawn from the interpretation dict (never from the raw documents), so a
chart shows exactly the numbers of its table. Every label from a corpus, generator or reviewer goes through
``figure_text`` (plotly renders a subset of HTML in labels and hovers)."""

from typing import Any

import plotly.graph_objects as go
from assay.artifacts.report.page import figure_html, figure_text
from markupsafe import Markup

PASS_TO_FAIL = "#b3261e"
FAIL_TO_PASS = "#1b6e3a"


def topic_sizes(topics: list[dict[str, Any]]) -> Markup:
    """Chunks per topic, largest on top; excluded topics in grey."""
    ordered = sorted(topics, key=lambda topic: topic["size"])
    figure = go.Figure(
        go.Bar(
            x=[topic["size"] for topic in ordered],
            y=[f"{topic['id']}: {figure_text(topic['label'], 40)}" for topic in ordered],
            orientation="h",
            marker_color=["#9aa0a6" if topic["status"] == "excluded" else "#1a73e8" for topic in ordered],
            hovertemplate="%{y}<br>%{x} chunks<extra></extra>",
        )
    )
    figure.update_layout(title="Chunks per topic (grey: excluded)", xaxis_title="chunks", yaxis_automargin=True)
    return figure_html(figure, height=max(260, 28 * len(ordered) + 100))


def thresholds_before_after(metrics: list[dict[str, Any]]) -> Markup:
    """The threshold before calibration (default or the user's) next to the one in force, per calibrated
    (primary) metric; the other metrics are never labelled, so their thresholds cannot move."""
    metrics = [m for m in metrics if m["calibrated_metric"]] or metrics
    names = [figure_text(f"{m['evaluator_id']} / {m['metric']}", 60) for m in metrics]
    figure = go.Figure(
        [
            go.Bar(
                name="before (default or user)",
                y=names,
                x=[m["before"] for m in metrics],
                orientation="h",
                marker_color="#9aa0a6",
            ),
            go.Bar(
                name="in force (after calibration)",
                y=names,
                x=[m["in_force"] for m in metrics],
                orientation="h",
                marker_color="#1a73e8",
            ),
        ]
    )
    figure.update_layout(
        barmode="group",
        xaxis_title="threshold",
        yaxis_automargin=True,
        legend_orientation="h",
        yaxis_autorange="reversed",
    )
    return figure_html(figure, height=max(260, 44 * len(metrics) + 120))


def weakness_grid(metrics: list[dict[str, Any]]) -> Markup:
    """One heatmap (topic x question type) per primary metric; a menu switches between metrics."""
    figure = go.Figure()
    for index, metric in enumerate(metrics):
        hover = [
            [
                f"mean {_fmt(mean)}, pass rate {_fmt(rate)}, {cases} cases"
                for mean, rate, cases in zip(means, rates, counts, strict=True)
            ]
            for means, rates, counts in zip(metric["mean"], metric["pass_rate"], metric["cases"], strict=True)
        ]
        figure.add_trace(
            go.Heatmap(
                z=metric["mean"],
                x=[figure_text(kind, 30) for kind in metric["question_types"]],
                y=[figure_text(topic, 40) for topic in metric["topics"]],
                text=hover,
                hovertemplate="%{y} x %{x}<br>%{text}<extra></extra>",
                colorscale="RdYlGn",
                reversescale=not metric["higher_is_better"],
                colorbar_title="mean",
                visible=index == 0,
                name=figure_text(f"{metric['evaluator_id']} / {metric['metric']}"),
            )
        )
    buttons = [
        {
            "label": figure_text(f"{metric['evaluator_id']} / {metric['metric']}", 60),
            "method": "update",
            "args": [{"visible": [i == index for i in range(len(metrics))]}],
        }
        for index, metric in enumerate(metrics)
    ]
    if len(metrics) > 1:
        figure.update_layout(
            updatemenus=[{"buttons": buttons, "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "bottom"}]
        )
    rows = max((len(metric["topics"]) for metric in metrics), default=1)
    figure.update_layout(yaxis_automargin=True, xaxis_tickangle=-30)
    return figure_html(figure, height=max(320, 26 * rows + 200))


def flips(perturbators: list[dict[str, Any]], title: str) -> Markup:
    """Verdict flips per perturbator (summed over the evaluators' primary metrics), split by direction."""
    names = [figure_text(f"{item['perturbator']} ({item['intensity']})", 50) for item in perturbators]
    figure = go.Figure(
        [
            go.Bar(
                name="pass → fail",
                x=names,
                y=[item["pass_to_fail"] for item in perturbators],
                marker_color=PASS_TO_FAIL,
            ),
            go.Bar(
                name="fail → pass",
                x=names,
                y=[item["fail_to_pass"] for item in perturbators],
                marker_color=FAIL_TO_PASS,
            ),
        ]
    )
    figure.update_layout(title=title, barmode="stack", yaxis_title="flipped verdicts", legend_orientation="h")
    return figure_html(figure, height=380)


def _fmt(value: float | None) -> str:
    return "unscored" if value is None else f"{value:.3f}"
