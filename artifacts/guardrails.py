"""The guardrail configuration (seed 002 "Actionable artifacts"): the thresholds a guardrail service applies to
live answers, human-calibrated where the calibration step produced one, in the manual's JSON shape.

The manual's example has exactly two keys, ``calibrated_thresholds`` (evaluator -> metric -> threshold) and
``evaluator_ids``; a client reading that shape keeps working. Which side of a threshold is bad differs per metric
(toxicity: high is bad), so ``threshold_details`` says it next to each threshold. Pure builder, no I/O."""

from collections.abc import Sequence
from typing import Any

from artifacts.findings.common import threshold_of
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import Calibration


def build_guardrail_config(
    calibration: Calibration | None,
    results: Sequence[EvaluationResult],
    *,
    evaluator_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Every metric with a threshold of the evaluated (or calibrated) evaluators, keys sorted. ``evaluator_ids``
    keeps only those evaluators; naming one without any threshold is an error, since it could guard nothing."""
    known = _known_thresholds(calibration, results)
    guarded = {
        evaluator_id: {metric: detail for metric, detail in metrics.items() if detail["threshold"] is not None}
        for evaluator_id, metrics in known.items()
    }
    if evaluator_ids is None:
        chosen = sorted(evaluator_id for evaluator_id, metrics in guarded.items() if metrics)
    else:
        chosen = sorted(dict.fromkeys(evaluator_ids))
        for evaluator_id in chosen:
            if evaluator_id not in known:
                raise ValueError(
                    f"evaluator_ids: {evaluator_id!r} was neither evaluated nor calibrated (known: {sorted(known)})"
                )
            if not guarded[evaluator_id]:
                raise ValueError(f"evaluator_ids: {evaluator_id!r} has no metric with a threshold to guard with")
    details = {evaluator_id: dict(sorted(guarded[evaluator_id].items())) for evaluator_id in chosen}
    return {
        "calibrated_thresholds": {
            evaluator_id: {metric: detail["threshold"] for metric, detail in metrics.items()}
            for evaluator_id, metrics in details.items()
        },
        "evaluator_ids": chosen,
        "threshold_details": details,
    }


def _known_thresholds(
    calibration: Calibration | None, results: Sequence[EvaluationResult]
) -> dict[str, dict[str, dict[str, Any]]]:
    """evaluator -> metric -> detail; the evaluation's (possibly overridden) threshold is the default, the
    calibration's threshold replaces it where one was fitted."""
    known: dict[str, dict[str, dict[str, Any]]] = {}
    for result in results:
        for metric in result.evaluator.metrics:
            known.setdefault(result.evaluator.id, {})[metric.key] = _detail(
                threshold_of(result, metric), None, metric.higher_is_better
            )
    for item in calibration.metrics if calibration else []:
        metrics = known.setdefault(item.evaluator_id, {})
        default = metrics[item.metric]["default_threshold"] if item.metric in metrics else item.default_threshold
        metrics[item.metric] = _detail(default, item.calibrated_threshold, item.higher_is_better)
    return known


def _detail(default: float | None, calibrated: float | None, higher_is_better: bool) -> dict[str, Any]:
    return {
        "threshold": calibrated if calibrated is not None else default,
        "source": "calibrated" if calibrated is not None else "default",
        "default_threshold": default,
        "higher_is_better": higher_is_better,
        "flag_when": "below" if higher_is_better else "above",
    }
