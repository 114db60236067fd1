"""The interpretation of an MRM run's later steps (failure clusters, weaknesses, robustness) and its three
compliance artifacts, as JSON-ready dicts built from the run's published documents (see ``mrm_steps``).

Perturbed scores are not exported (a robustness step publishes its lab and the flip counts): a flipped case
shows the original score, the threshold in force and the direction of the flip, never an invented score."""

from collections import Counter
from typing import Any

from assay.artifacts.report.mrm_steps import NOT_RUN, load, missing, who
from assay.artifacts.report.run_documents import RunDocuments
from pydantic import ValidationError

from assay.models.evaluation import on_good_side
from assay.models.mrm import Decision, FailureClusters, RobustnessReport, WeaknessReport
from assay.models.steps import Step
from assay.models.thresholds import ThresholdBook

ROBUSTNESS_STEPS = {"input_variations": Step.ROBUSTNESS_INPUT_VARIATIONS, "adversarial": Step.ROBUSTNESS_ADVERSARIAL}
ARTIFACTS = ("artifacts/corpus_patch.md", "artifacts/system_prompt_extension.md", "artifacts/guardrails.json")
EXAMPLES = 12
WEAKEST_CELLS = 10


def clusters(run: RunDocuments, taken: dict[str, Decision]) -> dict[str, Any]:
    found, problem = load(run, "failure-clustering/clusters.json", FailureClusters)
    if found is None:
        return missing(problem)
    named_by = who(taken.get(Step.FAILURE_CLUSTERING))["who"]
    return {
        "available": True,
        "failures": found.failures,
        "message": found.message,
        "named_by": named_by,
        "clusters": [
            {
                "id": cluster.id,
                "name": cluster.weakness,
                "named_by": named_by if cluster.weakness else "unnamed",
                "size": cluster.size,
                "keywords": cluster.keywords,
                "example_questions": cluster.example_questions[:5],
                "mean_scores": cluster.mean_scores,
            }
            for cluster in found.clusters
        ],
    }


def weaknesses(run: RunDocuments) -> dict[str, Any]:
    """Per primary metric, the topic x question-type grid over every model (cases-weighted), the manual's
    "bivariate analysis": the mean score per cell, with the pass rate where the data holds one."""
    report, problem = load(run, "weakness-detection/weaknesses.json", WeaknessReport)
    if report is None:
        return missing(problem)
    book, _ = load(run, "calibration/thresholds.json", ThresholdBook)
    metrics, cells = [], []
    for metric in report.metrics:
        merged: dict[tuple[str, str], Counter] = {}
        for group, by_type in metric.grid.items():
            model_key, _, topic = group.partition(":") if ":" in group else ("", "", group)
            for question_type, stat in by_type.items():
                acc = merged.setdefault((topic, question_type), Counter())
                acc["cases"] += stat.cases
                if stat.mean is not None:
                    acc["mean_sum"] += stat.mean * stat.cases
                    acc["mean_cases"] += stat.cases
                if stat.pass_rate is not None:
                    acc["pass_sum"] += stat.pass_rate * stat.cases
                    acc["pass_cases"] += stat.cases
                cells.append(
                    {
                        "evaluator_id": metric.evaluator_id,
                        "metric": metric.metric,
                        "model": model_key,
                        "topic": topic,
                        "question_type": question_type,
                        "mean": stat.mean,
                        "pass_rate": stat.pass_rate,
                        "cases": stat.cases,
                    }
                )
        entry = book.entry(metric.evaluator_id, metric.metric) if book else None
        metrics.append(
            {
                "evaluator_id": metric.evaluator_id,
                "metric": metric.metric,
                "higher_is_better": entry.higher_is_better if entry else True,
                **_grid(merged),
                "weakest": metric.weakest,
            }
        )
    # pass rates compare across metrics (scales and directions differ); means do not
    scored = [item for item in cells if item["pass_rate"] is not None]
    return {
        "available": True,
        "value": "mean primary score",
        "metrics": metrics,
        "weakest_groups": [
            {"evaluator_id": m["evaluator_id"], "metric": m["metric"], "group": group}
            for m in metrics
            for group in m["weakest"]
        ],
        "weakest_cells": sorted(scored, key=lambda item: (item["pass_rate"], -item["cases"]))[:WEAKEST_CELLS],
    }


def _grid(merged: dict[tuple[str, str], Counter]) -> dict[str, Any]:
    """Row (topic) by column (question type) matrices of the cases-weighted mean and pass rate."""
    topics = sorted({topic for topic, _ in merged})
    kinds = sorted({kind for _, kind in merged})

    def ratio(topic: str, kind: str, total: str, count: str) -> float | None:
        acc = merged.get((topic, kind))
        return round(acc[total] / acc[count], 6) if acc and acc[count] else None

    return {
        "topics": topics,
        "question_types": kinds,
        "mean": [[ratio(t, k, "mean_sum", "mean_cases") for k in kinds] for t in topics],
        "pass_rate": [[ratio(t, k, "pass_sum", "pass_cases") for k in kinds] for t in topics],
        "cases": [[int(merged[t, k]["cases"]) if (t, k) in merged else 0 for k in kinds] for t in topics],
    }


def robustness(run: RunDocuments, kind: str) -> dict[str, Any]:
    """Flips per perturbator (and intensity) over every evaluator's primary metric, with flipped examples."""
    step = ROBUSTNESS_STEPS[kind]
    raw = run.get(f"{step}/flips.json")
    if raw is None:
        return missing(f"{step}/flips.json: {NOT_RUN}")
    try:
        reports = [RobustnessReport.model_validate(item) for item in raw]
    except (ValidationError, TypeError) as error:
        return missing(f"{step}/flips.json: unreadable ({str(error).splitlines()[0]})")
    cases = {
        f"{row['model_key']}:{row['test_case']['key']}": row
        for row in (run.get(f"{step}/test_lab.json") or {}).get("rows", [])
    }
    intensities: dict[str, set[str]] = {}
    for row in cases.values():
        case = row["test_case"]
        intensities.setdefault(_category(case, "perturbator"), set()).add(_category(case, "intensity"))
    totals: dict[str, Counter] = {}
    for report in reports:
        for name, count in report.by_perturbator.items():
            totals.setdefault(name, Counter()).update(count.model_dump())
    perturbators = [
        {"perturbator": name, "intensity": ", ".join(sorted(intensities.get(name, {"unknown"}))), **dict(total)}
        for name, total in sorted(totals.items())
    ]
    return {
        "available": True,
        "step": step,
        "perturbators": perturbators,
        "by_evaluator": [
            {
                "evaluator_id": r.evaluator_id,
                "metric": r.metric,
                "by_perturbator": {name: count.model_dump() for name, count in r.by_perturbator.items()},
            }
            for r in reports
        ],
        "cases": sum(item["cases"] for item in perturbators),
        "flips": sum(item["flips"] for item in perturbators),
        "examples": _examples(run, reports, cases),
        "lab_available": bool(cases),
    }


def _category(case: dict[str, Any], prefix: str) -> str:
    return next((c.split(":", 1)[1] for c in case.get("categories", []) if c.startswith(f"{prefix}:")), "unknown")


def _examples(run: RunDocuments, reports: list[RobustnessReport], cases: dict[str, dict]) -> list[dict[str, Any]]:
    """Flipped cases, taken round-robin over the evaluators so one noisy metric does not fill the list."""
    book, _ = load(run, "calibration/thresholds.json", ThresholdBook)
    queues = [[(report, key) for key in report.flipped_row_keys] for report in reports]
    picked = []
    while len(picked) < EXAMPLES and any(queues):
        picked += [queue.pop(0) for queue in queues if queue][: EXAMPLES - len(picked)]
    examples = []
    for report, row_key in picked:
        row = cases.get(row_key, {})
        case = row.get("test_case", {})
        model_key, _, perturbed_key = row_key.partition(":")
        original_key = next(
            (link["target"] for link in case.get("relationships", []) if link.get("type") == "perturbation"), ""
        )
        score = _original_score(run, report, model_key, original_key)
        entry = book.entry(report.evaluator_id, report.metric) if book else None
        threshold = entry.threshold if entry else None
        direction = None
        if score is not None and threshold is not None:
            passed = on_good_side(score, threshold, entry.higher_is_better)
            direction = "pass to fail" if passed else "fail to pass"
        examples.append(
            {
                "evaluator_id": report.evaluator_id,
                "metric": report.metric,
                "model": model_key,
                "perturbed_key": perturbed_key,
                "original_key": original_key,
                "perturbator": _category(case, "perturbator") if case else "unknown",
                "intensity": _category(case, "intensity") if case else "unknown",
                "original_question": _original_question(run, original_key),
                "perturbed_question": case.get("prompt"),
                "perturbed_answer": row.get("actual_output"),
                "original_score": score,
                "threshold": threshold,
                "direction": direction,
            }
        )
    return examples


def _original_question(run: RunDocuments, key: str) -> str | None:
    for test in (run.get("test-generation/suite.json") or {}).get("tests", []):
        for case in test.get("test_cases", []):
            if case.get("key") == key:
                return case.get("prompt")
    return None


def _original_score(run: RunDocuments, report: RobustnessReport, model_key: str, case_key: str) -> float | None:
    results = run.get(f"automated-evaluation/{report.evaluator_id}/results.json") or {}
    for row in results.get("results", []):
        if row.get("model_key") == model_key and row.get("test_case_key") == case_key:
            value = row.get(report.metric)
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return None


def compliance_artifacts(run: RunDocuments) -> list[dict[str, Any]]:
    """The corpus patch and prompt extension as text (escaped when shown), the guardrails as a table."""
    shown = []
    for name in ARTIFACTS:
        document = run.get(name)
        if document is None:
            shown.append({"name": name, "available": False, "message": f"{name}: {NOT_RUN}"})
        elif name.endswith(".json"):
            details = document.get("threshold_details") or {}
            rows = [
                {
                    "evaluator_id": evaluator_id,
                    "metric": metric,
                    "threshold": detail.get("threshold"),
                    "flag_when": detail.get("flag_when", ""),
                    "source": detail.get("source", ""),
                    "set_by": detail.get("set_by", ""),
                }
                for evaluator_id, metrics in sorted(details.items())
                for metric, detail in sorted(metrics.items())
            ]
            if not rows:
                rows = [
                    {
                        "evaluator_id": evaluator_id,
                        "metric": metric,
                        "threshold": threshold,
                        "flag_when": "",
                        "source": "not recorded",
                        "set_by": "not recorded",
                    }
                    for evaluator_id, metrics in sorted((document.get("calibrated_thresholds") or {}).items())
                    for metric, threshold in sorted(metrics.items())
                ]
            shown.append(
                {
                    "name": name,
                    "available": True,
                    "kind": "guardrails",
                    "rows": rows,
                    "reviewed_by": document.get("thresholds_reviewed_by", "not recorded"),
                }
            )
        else:
            shown.append({"name": name, "available": True, "kind": "text", "text": str(document)})
    return shown
