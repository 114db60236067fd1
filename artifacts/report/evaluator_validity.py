"""The "Evaluator validity" sections: how far each metric's verdicts were ever checked against people.

Two kinds of evidence, never mixed up. The evaluation report shows each evaluator metric's *published*
figures (``assay.validity.published``: human-labelled benchmark sets, with their source and licence credited)
or says "not measured against human labels". The MRM report adds *this run's reviewer*: each calibrated
metric's agreement with the answers a person labelled in step 5, before and after calibration
(``assay.validity.agreement`` says what a label means and why the figures need their two cautions). A run
nobody reviewed says so; a policy's decisions are never shown as labels.

Published figures are read when the report is rendered (the package's ``measured.json``); each names the
date it was measured on, so a report rebuilt later shows which measurement it quotes. Pure apart from that
lookup, which callers inject."""

from collections.abc import Callable, Iterable
from typing import Any

from assay.artifacts.report.mrm_steps import load, missing, who
from assay.artifacts.report.run_documents import RunDocuments

from assay.models.mrm import Calibration, Decision
from assay.models.steps import Step
from assay.validity.figures import NOT_MEASURED, published_figure, reviewer_by
from assay.validity.published import PublishedFigure, published_metrics

PublishedLookup = Callable[[str], dict[str, list[PublishedFigure]]]


def published_part(evaluators: Iterable[tuple[str, str, list[str]]], lookup: PublishedLookup) -> dict[str, Any]:
    """Per (evaluator id, display name, metric keys): the metrics with published figures, one row per figure,
    and the metrics without any; ``credits`` lists each data source once with its licence."""
    rows, credits = [], {}
    for evaluator_id, display_name, metrics in evaluators:
        found = lookup(evaluator_id)
        keys = list(dict.fromkeys([*metrics, *found]))
        figures = [{"metric": key, **published_figure(figure)} for key in keys for figure in found.get(key, [])]
        for figure in figures:
            credits[(figure["source"], figure["licence"])] = None
        rows.append(
            {
                "evaluator_id": evaluator_id,
                "display_name": display_name,
                "figures": figures,
                "not_measured": [key for key in keys if not found.get(key)],
            }
        )
    dates = sorted({f"{figure['measured_by']} on {figure['measured_on']}" for row in rows for figure in row["figures"]})
    return {
        "evaluators": rows,
        "credits": [{"source": source, "licence": licence} for source, licence in credits],
        "measured": dates,
        "not_measured_text": NOT_MEASURED,
    }


def evaluation_validity(evaluators: list[dict[str, Any]], lookup: PublishedLookup = published_metrics) -> dict:
    """The evaluation report's part, from the interpretation's evaluators (every metric of each)."""
    return published_part(((e["id"], e["display_name"], [m["key"] for m in e["metrics"]]) for e in evaluators), lookup)


def mrm_validity(run: RunDocuments, taken: dict[str, Decision], lookup: PublishedLookup = published_metrics) -> dict:
    """The MRM report's part: the reviewer's figures of step 5 and the published ones of the run's evaluators."""
    fitted, problem = load(run, "calibration/calibration.json", Calibration)
    evaluation = run.evaluation()
    metrics: dict[str, list[str]] = {}
    for evaluator_id, results in evaluation.results():
        meta = (results.get("evaluator") or {}).get("metrics_meta", [])
        metrics[evaluator_id] = [item["key"] for item in meta if "key" in item]
    for item in fitted.metrics if fitted else []:
        metrics.setdefault(item.evaluator_id, []).append(item.metric)
    published = published_part(((key, key, list(dict.fromkeys(keys))) for key, keys in metrics.items()), lookup)
    if fitted is None:
        return {"reviewer": missing(problem), "published": published}
    decision = who(taken.get(Step.CALIBRATION))
    person = fitted.decided_by == "person"
    rows = [
        {
            "evaluator_id": item.evaluator_id,
            "metric": item.metric,
            **item.validity.model_dump(mode="json"),
            "by": reviewer_by(item.validity, run.run_id or ""),
        }
        for item in fitted.metrics
        if person and item.validity is not None
    ]
    statement = (
        f"Labels given by {decision['who']} in step 5.{_changed(rows)}"
        if person and rows
        else "No reviewer labelled answers in this run: agreement with people was not measured here; "
        "thresholds were not calibrated by a person."
    )
    unlabelled = [f"{m.evaluator_id}/{m.metric}" for m in fitted.metrics if person and m.validity is None]
    return {
        "reviewer": {"available": True, "statement": statement, "metrics": rows, "unlabelled": unlabelled},
        "published": published,
    }


def _changed(rows: list[dict[str, Any]]) -> str:
    """How many labels differ from the metrics' verdicts: labels that only confirm are no independent evidence."""
    counts = [row.get("changed") for row in rows]
    if None in counts:
        return ""
    labels, changed = sum(row["n"] for row in rows), sum(counts)
    if not changed:
        return (
            f" All {labels} labels confirm the metrics' verdicts as proposed, none changed: the agreement below "
            "shows the reviewer accepted the metrics, it is no independent evidence of their validity."
        )
    return f" {changed} of {labels} labels differ from the metric's verdict proposed in the form; the rest confirm it."
