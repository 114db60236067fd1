"""The guardrail configuration (seed 002 "Actionable artifacts"): the thresholds a guardrail service applies to
live answers, in the manual's JSON shape, taken from the run's threshold book.

The manual's example has exactly two keys, ``calibrated_thresholds`` (evaluator -> metric -> threshold) and
``evaluator_ids``; a client reading that shape keeps working. Despite the manual's key name, a threshold is
only calibrated where a person labelled answers for it: ``threshold_details`` states each one's source
(default, user, calibrated), who set it and which side is bad (toxicity: high is bad), and
``thresholds_reviewed_by`` says "no reviewer" for an unattended run. Pure builder, no I/O."""

from collections.abc import Sequence
from typing import Any

from assay.models.thresholds import ThresholdBook, ThresholdEntry


def build_guardrail_config(book: ThresholdBook, *, evaluator_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """Every metric with a threshold in the book, keys sorted. ``evaluator_ids`` keeps only those evaluators;
    naming one without any threshold is an error, since it could guard nothing."""
    known: dict[str, dict[str, dict[str, Any]]] = {}
    for entry in book.entries:
        known.setdefault(entry.evaluator_id, {})[entry.metric] = _detail(entry)
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
                raise ValueError(f"evaluator_ids: {evaluator_id!r} was not evaluated (known: {sorted(known)})")
            if not guarded[evaluator_id]:
                raise ValueError(f"evaluator_ids: {evaluator_id!r} has no metric with a threshold to guard with")
    details = {evaluator_id: dict(sorted(guarded[evaluator_id].items())) for evaluator_id in chosen}
    return {
        "calibrated_thresholds": {
            evaluator_id: {metric: detail["threshold"] for metric, detail in metrics.items()}
            for evaluator_id, metrics in details.items()
        },
        "evaluator_ids": chosen,
        "thresholds_reviewed_by": book.reviewer,
        "threshold_details": details,
    }


def _detail(entry: ThresholdEntry) -> dict[str, Any]:
    return {
        "threshold": entry.threshold,
        "source": entry.source,
        "set_by": entry.set_by,
        "default_threshold": entry.default_threshold,
        "higher_is_better": entry.higher_is_better,
        "flag_when": "below" if entry.higher_is_better else "above",
        **({"calibration": entry.calibration} if entry.calibration else {}),
    }
