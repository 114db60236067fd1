"""The sections of an evaluation report, rendered from ``interpretation.json`` only: summary, models and
hosts, one leaderboard per evaluator (figures and the score table), evaluator validity, problems, insights and
the eval eye. An MRM run's report leaves the validity section to its MRM part, which shows the same published
figures beside its reviewer's.

Templates escape everything; this module only shapes data (verdicts, counts, option lists) so templates stay
free of logic. Long texts are cut for display only: the full text stays in interpretation.json and the CSV."""

import re
from typing import Any

from assay.artifacts.report.figures import evaluator_figures
from assay.artifacts.report.interpretation import verdict
from assay.artifacts.report.page import Section, packed, render

DISPLAY_LIMIT = 4000
"""Characters of one answer, question or context chunk shown in the page; a megabyte answer would make the
report unusable, and the reviewer is told how long the full text is."""

_ID = re.compile(r"[^a-zA-Z0-9_-]+")


def section_id(*parts: str) -> str:
    """An HTML id from names that come from the run (evaluator ids): only safe characters survive."""
    return "-".join(_ID.sub("-", part).strip("-") or "x" for part in parts)


def semaphore(problem_counts: dict[str, int]) -> str:
    """Red with any high-severity problem, amber with medium ones, green otherwise (low ones are advice)."""
    if problem_counts.get("high"):
        return "high"
    return "medium" if problem_counts.get("medium") else "low"


def _score_table(evaluator: dict[str, Any]) -> list[dict[str, Any]]:
    """The leaderboard table: per model each metric's mean with its verdict against the threshold, and how
    many cases were scored, passed and left unscored (unscored never counts as a failing zero)."""
    rows = []
    for row in evaluator["leaderboard"]:
        cells = []
        for metric in evaluator["metrics"]:
            aggregate = row["metrics"].get(metric["key"]) or {}
            mean = aggregate.get("mean")
            cells.append(
                {
                    "mean": mean,
                    "verdict": verdict(mean, metric["threshold"], metric["higher_is_better"]),
                    "passed": aggregate.get("passed"),
                    "scored": aggregate.get("scored", 0),
                    "unscored": aggregate.get("unscored", 0),
                }
            )
        rows.append(
            {"rank": row["rank"], "model_name": row["model_name"], "model_key": row["model_key"], "cells": cells}
        )
    return rows


def leaderboard_section(evaluator: dict[str, Any], cases: list[dict[str, Any]]) -> Section:
    """One evaluator's leaderboard: figures, score table, metrics and thresholds (also the ZIP's fragment)."""
    html = render(
        "evaluation/leaderboard.html.j2",
        evaluator=evaluator,
        figures=evaluator_figures(evaluator, cases),
        table=_score_table(evaluator),
    )
    return Section(id=section_id("leaderboard", evaluator["id"]), title=evaluator["display_name"], html=html)


def _metric_options(interpretation: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "label": evaluator["display_name"],
            "metrics": [
                {"value": f"{evaluator['id']}/{metric['key']}", "label": metric["display_name"]}
                for metric in evaluator["metrics"]
            ],
        }
        for evaluator in interpretation["evaluators"]
    ]


def evaluation_sections(interpretation: dict[str, Any]) -> list[Section]:
    """Summary, Models and hosts, Leaderboards (a child per evaluator), Evaluator validity (not for MRM runs),
    Problems, Insights, Eval eye."""
    overview = interpretation["overview"]
    cases = interpretation["cases"]
    counts = interpretation["problem_counts"]
    summary = render(
        "evaluation/summary.html.j2",
        overview=overview,
        counts=counts,
        light=semaphore(counts),
        insights=len(interpretation["insights"]),
        headline=interpretation.get("headline", []),
        case_rows=len(cases),
    )
    leaderboards = [leaderboard_section(evaluator, cases) for evaluator in interpretation["evaluators"]]
    eye = render(
        "evaluation/eval_eye.html.j2",
        rows=packed(render("evaluation/eye_rows.html.j2", cases=cases, limit=DISPLAY_LIMIT)),
        cases=cases,
        models=interpretation["models"],
        metric_options=_metric_options(interpretation),
    )
    validity = [
        Section(
            id="validity",
            title="Evaluator validity",
            html=render("evaluation/validity.html.j2", part=interpretation["validity"]),
        )
    ]
    return [
        Section(id="summary", title="Summary", html=summary),
        Section(
            id="models",
            title="Models and hosts",
            html=render("evaluation/models.html.j2", models=interpretation["models"]),
        ),
        Section(
            id="leaderboards",
            title="Leaderboards",
            html=render(
                "evaluation/leaderboards_intro.html.j2",
                entries=[
                    (child.id, evaluator)
                    for child, evaluator in zip(leaderboards, interpretation["evaluators"], strict=True)
                ],
            ),
            children=leaderboards,
        ),
        *(validity if "mrm" not in interpretation else []),
        Section(
            id="problems",
            title="Problems",
            html=render("evaluation/problems.html.j2", problems=interpretation["problems"]),
        ),
        Section(
            id="insights",
            title="Insights",
            html=render("evaluation/insights.html.j2", insights=interpretation["insights"]),
        ),
        Section(id="eval-eye", title="Eval eye", html=eye),
    ]
