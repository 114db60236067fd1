"""Leaderboards per evaluator: metric x model table, failure counts of boolean metrics, weak points."""

from typing import Any

from assay.artifacts.findings.common import Thresholds, threshold_of

from assay.escaping import for_markdown_cell, for_markdown_text
from assay.models import TestLab
from assay.models.evaluation import EvaluationResult


def leaderboard(
    lab: TestLab, result: EvaluationResult, weak_points: int = 10, thresholds: Thresholds = None
) -> dict[str, Any]:
    spec = result.evaluator
    primary = spec.primary_metric
    models = sorted(
        result.aggregates,
        key=lambda key: _sort_key(result.aggregates[key][primary.key].mean, primary.higher_is_better),
    )
    table = [
        {
            "rank": rank,
            "model_key": model_key,
            "model_name": lab.model(model_key).name or model_key,
            **{key: aggregate.mean for key, aggregate in result.aggregates[model_key].items()},
            "scored": result.aggregates[model_key][primary.key].scored,
            "unscored": result.aggregates[model_key][primary.key].unscored,
        }
        for rank, model_key in enumerate(models, start=1)
    ]
    return {
        "evaluator": spec.id,
        "primary_metric": primary.key,
        "metrics": [
            {
                "key": m.key,
                "display_name": m.display_name,
                "higher_is_better": m.higher_is_better,
                "threshold": threshold_of(result, m, thresholds),
            }
            for m in spec.metrics
        ],
        "table": table,
        "failures": _failure_leaderboard(result),
        "weak_points": _weak_points(lab, result, weak_points, thresholds),
    }


def _sort_key(value: float | None, higher_is_better: bool) -> tuple[int, float]:
    if value is None:
        return (1, 0.0)
    return (0, -value if higher_is_better else value)


def _failure_leaderboard(result: EvaluationResult) -> dict[str, list[dict[str, Any]]]:
    """For boolean metrics (every scored value 0 or 1): failing cases per model, fewest failures first."""
    boards: dict[str, list[dict[str, Any]]] = {}
    for metric in result.evaluator.metrics:
        values = [row.scores.get(metric.key) for row in result.rows]
        scored = [value for value in values if value is not None]
        if not scored or any(value not in (0.0, 1.0) for value in scored):
            continue
        bad = 0.0 if metric.higher_is_better else 1.0
        counts = {model_key: 0 for model_key in result.aggregates}
        for row in result.rows:
            if row.scores.get(metric.key) == bad:
                counts[row.model_key] += 1
        boards[metric.key] = [
            {"model_key": model_key, "failures": failures, "scored": result.aggregates[model_key][metric.key].scored}
            for model_key, failures in sorted(counts.items(), key=lambda item: item[1])
        ]
    return boards


def _weak_points(
    lab: TestLab, result: EvaluationResult, limit: int, thresholds: Thresholds
) -> dict[str, list[dict[str, Any]]]:
    """Per model, its test cases ordered from the worst primary score to the best."""
    primary = result.evaluator.primary_metric
    threshold = threshold_of(result, primary, thresholds)
    prompts = {row.test_case.key: row.test_case.prompt for row in lab.rows}
    points: dict[str, list[dict[str, Any]]] = {}
    for model_key in result.aggregates:
        scored = [
            (row.test_case_key, row.scores[primary.key])
            for row in result.rows
            if row.model_key == model_key and row.scores.get(primary.key) is not None
        ]
        scored.sort(key=lambda item: item[1], reverse=not primary.higher_is_better)
        points[model_key] = [
            {
                "test_case_key": key,
                "question": prompts[key],
                primary.key: value,
                "passes": None if threshold is None else primary.passes(value, threshold),
            }
            for key, value in scored[:limit]
        ]
    return points


def leaderboard_markdown(board: dict[str, Any]) -> str:
    """The board as Markdown; every model key, name, metric and question is escaped (they come from files
    and from the systems under test)."""
    keys = [metric["key"] for metric in board["metrics"]]
    lines = [
        f"# Leaderboard: {for_markdown_text(board['evaluator'])}",
        "",
        "| rank | model | " + " | ".join(for_markdown_cell(key) for key in keys) + " | scored | unscored |",
        "|---|---|" + "---|" * len(keys) + "---|---|",
    ]
    for row in board["table"]:
        cells = ["n/a" if row[key] is None else f"{row[key]:.3f}" for key in keys]
        lines.append(
            f"| {row['rank']} | {for_markdown_cell(row['model_name'])} | "
            + " | ".join(cells)
            + f" | {row['scored']} | {row['unscored']} |"
        )
    for metric_key, rows in board["failures"].items():
        lines += [
            "",
            f"## Failures: {for_markdown_text(metric_key)}",
            "",
            "| model | failures | scored |",
            "|---|---|---|",
        ]
        lines += [f"| {for_markdown_cell(row['model_key'])} | {row['failures']} | {row['scored']} |" for row in rows]
    primary = board["primary_metric"]
    lines += ["", f"## Weak points ({for_markdown_text(primary)}, worst first)"]
    for model_key, points in board["weak_points"].items():
        lines += ["", f"### {for_markdown_text(model_key)}", ""]
        lines += [
            f"- {for_markdown_text(point['test_case_key'])}: {point[primary]:.3f} "
            + for_markdown_text(point["question"])
            for point in points
        ]
    return "\n".join(lines) + "\n"
