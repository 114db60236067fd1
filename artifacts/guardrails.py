"""The guardrail configuration (seed 002 "Actionable artifacts"): the thresholds a guardrail service applies to
live answers, in the manual's JSON shape, taken from the run's threshold book.

The manual's example has exactly two keys, ``calibrated_thresholds`` (evaluator -> metric -> threshold) and
``evaluator_ids``; a client reading that shape keeps working. Despite the manual's key name, a threshold is
only calibrated where a person labelled answers for it: ``threshold_details`` states each one's source
(default, user, calibrated), who set it and which side is bad (toxicity: high is bad), and
``thresholds_reviewed_by`` says "no reviewer" for an unattended run. Each detail's ``validity`` records the
measurement behind the threshold (``assay.validity.figures.threshold_validity``): the run's reviewer labels
(MRM step 5) where a person labelled that metric, else the evaluator's published benchmark figures, else
"not measured". Pure builder: the published figures come through ``published``, by default the package's."""

from collections.abc import Callable, Sequence
from typing import Any

from assay.models.mrm import Calibration
from assay.models.thresholds import ThresholdBook, ThresholdEntry
from assay.validity.figures import threshold_validity
from assay.validity.published import PublishedFigure, published_validity

Published = Callable[[str, str], list[PublishedFigure]]


def build_guardrail_config(
    book: ThresholdBook,
    *,
    evaluator_ids: Sequence[str] | None = None,
    calibration: Calibration | None = None,
    run_id: str = "",
    published: Published = published_validity,
) -> dict[str, Any]:
    """Every metric with a threshold in the book, keys sorted. ``evaluator_ids`` keeps only those evaluators;
    naming one without any threshold is an error, since it could guard nothing. ``calibration``: the run's
    step 5, whose reviewer figures (a person's labels only) are recorded for the metrics they labelled."""
    reviewed = {}
    if calibration is not None and calibration.decided_by == "person":
        reviewed = {(item.evaluator_id, item.metric): item.validity for item in calibration.metrics}
    known: dict[str, dict[str, dict[str, Any]]] = {}
    for entry in book.entries:
        validity = threshold_validity(
            reviewed.get((entry.evaluator_id, entry.metric)),
            entry.source == "calibrated",
            published(entry.evaluator_id, entry.metric),
            run_id,
        )
        known.setdefault(entry.evaluator_id, {})[entry.metric] = {**_detail(entry), "validity": validity}
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
        "thresholds_labelled": book.labelled,
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
        # which of calibrated / confirmed / unsupported / undecided / not_meaningful the labels made it
        **({"calibration_outcome": entry.outcome} if entry.outcome else {}),
    }
