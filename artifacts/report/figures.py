"""Leaderboard figures of one evaluator, as the manual draws them: a radar when the evaluator has more than
one metric, bars when it has three or fewer (both may apply), and a heatmap of test cases x models for the
primary metric, so a reviewer sees at a glance which cases sink which model.

Every label a figure shows (model names, case keys, questions) comes from the run and goes through
``figure_text``: plotly renders a subset of HTML inside labels and hovers.

Figures are built as plain plotly JSON (the tests check each kind against plotly's schema): building them as
validated ``graph_objects`` took over a second for an evaluation with every evaluator, which publishing pays
on every run."""

from functools import cache
from typing import Any

from assay.artifacts.report.page import figure_html, figure_text
from markupsafe import Markup

Figure = dict[str, Any]

_HEATMAP_ROW_PX = 18
_HEATMAP_MAX_PX = 1400
_GOOD_HIGH = [[0.0, "#b3261e"], [0.5, "#f2c14e"], [1.0, "#1b6e3a"]]
"""Red (bad) to green (good), spelled out: plotly.js knows no "RdYlGn" (only the Python side resolves it)."""
_GOOD_LOW = [[0.0, "#1b6e3a"], [0.5, "#f2c14e"], [1.0, "#b3261e"]]


def _mean(row: dict[str, Any], metric_key: str) -> float | None:
    return (row["metrics"].get(metric_key) or {}).get("mean")


def radar(evaluator: dict[str, Any]) -> Figure | None:
    """Metrics that share the primary metric's range, one closed polygon per model; None when fewer than
    three metrics share a scale (a two-axis radar is a line, and mixed scales would mislead)."""
    metrics = evaluator["metrics"]
    primary = next((m for m in metrics if m["primary"]), metrics[0] if metrics else None)
    if primary is None or len(metrics) < 2:
        return None
    shared = [m for m in metrics if m["range"] == primary["range"]]
    if len(shared) < 3:
        return None
    labels = [figure_text(m["display_name"], 30) for m in shared]
    traces = []
    for row in evaluator["leaderboard"]:
        values = [_mean(row, m["key"]) for m in shared]
        traces.append(
            {
                "type": "scatterpolar",
                "r": [*values, values[0]],
                "theta": [*labels, labels[0]],
                "name": figure_text(row["model_name"], 40),
                "fill": "toself",
                "opacity": 0.6,
                "connectgaps": False,
            }
        )
    low, high = primary["range"] or (0.0, 1.0)
    layout = {
        "title": {"text": figure_text(f"{evaluator['display_name']}: mean per metric")},
        "polar": {"radialaxis": {"range": [low, high]}},
        "showlegend": True,
    }
    return {"data": traces, "layout": layout}


def bars(evaluator: dict[str, Any]) -> Figure | None:
    """Grouped bars of each metric's mean per model (three metrics or fewer); the hover names the threshold
    and the scored/unscored counts, since a mean over few scored cases means little."""
    metrics = evaluator["metrics"]
    if not metrics or len(metrics) > 3:
        return None
    labels = [figure_text(m["display_name"], 30) for m in metrics]
    traces = []
    for row in evaluator["leaderboard"]:
        hovers = []
        for metric in metrics:
            aggregate = row["metrics"].get(metric["key"]) or {}
            threshold = "none" if metric["threshold"] is None else f"{metric['threshold']:g}"
            hovers.append(
                f"scored {aggregate.get('scored', 0)}, unscored {aggregate.get('unscored', 0)}, threshold {threshold}"
            )
        traces.append(
            {
                "type": "bar",
                "x": labels,
                "y": [_mean(row, m["key"]) for m in metrics],
                "name": figure_text(row["model_name"], 40),
                "hovertext": hovers,
                "hovertemplate": "%{x}: %{y:.3f}<br>%{hovertext}<extra>%{fullData.name}</extra>",
            }
        )
    layout = {"barmode": "group", "title": {"text": figure_text(f"{evaluator['display_name']}: mean per model")}}
    return {"data": traces, "layout": layout}


def heatmap(evaluator: dict[str, Any], cases: list[dict[str, Any]]) -> Figure | None:
    """Test cases x models for the primary metric; an unscored cell stays empty (a gap, never 0)."""
    primary = next((m for m in evaluator["metrics"] if m["primary"]), None)
    if primary is None:
        return None
    models: list[str] = []
    names: dict[str, str] = {}
    scores: dict[tuple[str, str], float | None] = {}
    questions: dict[str, str] = {}
    for case in cases:
        for evaluation in case["evaluations"]:
            if evaluation["evaluator"] != evaluator["id"]:
                continue
            if case["model_key"] not in names:
                models.append(case["model_key"])
                names[case["model_key"]] = case["model_name"]
            score = next(m["score"] for m in evaluation["metrics"] if m["key"] == primary["key"])
            scores[case["test_case_key"], case["model_key"]] = score
            questions.setdefault(case["test_case_key"], case["question"] or "")
    if not scores:
        return None
    keys = list(questions)
    z = [[scores.get((key, model)) for model in models] for key in keys]
    hover = [
        [
            f"{figure_text(key, 40)}: {figure_text(questions[key], 80)}<br>{figure_text(names[model], 40)}"
            for model in models
        ]
        for key in keys
    ]
    low, high = primary["range"] or (None, None)
    trace: dict[str, Any] = {
        "type": "heatmap",
        "z": z,
        "x": [figure_text(names[model], 40) for model in models],
        "y": [figure_text(key, 40) for key in keys],
        "text": hover,
        "hovertemplate": "%{text}<br>score %{z:.3f}<extra></extra>",
        "colorscale": _GOOD_HIGH if primary["higher_is_better"] else _GOOD_LOW,
        "hoverongaps": False,
        "xgap": 1,
        "ygap": 1,
    }
    if high is not None and high <= 1:
        trace |= {"zmin": low, "zmax": high}
    layout = {
        "title": {"text": figure_text(f"{evaluator['display_name']}: {primary['display_name']} per test case")},
        "yaxis": {"autorange": "reversed", "type": "category"},
        "xaxis": {"type": "category"},
        "height": min(_HEATMAP_MAX_PX, 160 + _HEATMAP_ROW_PX * len(keys)),
    }
    return {"data": [trace], "layout": layout}


@cache
def _template(name: str) -> dict[str, Any]:
    import plotly.io

    return plotly.io.templates[name].to_plotly_json()


class _PlainFigure:
    """Plotly JSON with the two methods ``figure_html`` calls, serialised without re-validation."""

    def __init__(self, figure: Figure) -> None:
        self.figure = {"data": figure["data"], "layout": dict(figure["layout"])}

    def update_layout(self, **changes: Any) -> None:
        if isinstance(changes.get("template"), str):
            changes["template"] = _template(changes["template"])
        self.figure["layout"].update(changes)

    def to_json(self) -> str:
        import plotly.io

        return plotly.io.to_json(self.figure, validate=False)


def evaluator_figures(evaluator: dict[str, Any], cases: list[dict[str, Any]]) -> list[Markup]:
    """The figures of one evaluator's leaderboard, as embeddable HTML, in reading order."""
    figures = [radar(evaluator), bars(evaluator), heatmap(evaluator, cases)]
    return [figure_html(_PlainFigure(figure)) for figure in figures if figure is not None]
