"""Calibration in rounds, as a reviewer who labels on demand would drive it: the tests use it to exercise
``sample_for_review`` (with ``exclude`` and ``around``) and ``fit_thresholds`` together. The product's
calibration step asks its reviewer once, through the review form."""

from collections.abc import Callable, Sequence

from assay.models import TestLab
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import Calibration, ReviewItem, ReviewLabel
from assay.mrm.calibration import fit_thresholds, sample_for_review

LabelFn = Callable[[list[ReviewItem]], list[ReviewLabel]]


def calibrate_until_stable(
    lab: TestLab,
    results: Sequence[EvaluationResult],
    label_fn: LabelFn,
    *,
    max_rounds: int = 3,
    per_metric: int = 8,
    seed: int = 0,
    min_labels: int = 6,
    bootstrap: int = 500,
    max_interval_width: float = 0.1,
) -> Calibration:
    """Sample, label through ``label_fn``, fit; then draw ``per_metric`` new cases, centred on the current
    estimate, for the metrics not yet stable and refit on everything labelled so far, until all are stable,
    the sample runs dry or ``max_rounds`` fits were made. ``rounds``: how many fits it took (0: nothing to
    label)."""
    items: list[ReviewItem] = []
    labels: list[ReviewLabel] = []
    unstable: set[tuple[str, str]] | None = None
    around: dict[tuple[str, str], float] = {}
    calibration = fit_thresholds([], [], results).model_copy(update={"rounds": 0})
    for round_index in range(max_rounds):
        fresh = sample_for_review(
            lab,
            results,
            per_metric=per_metric,
            seed=seed + round_index,
            exclude={item.item_id for item in items},
            around=around,
        )
        if unstable is not None:
            fresh = [item for item in fresh if (item.evaluator_id, item.metric) in unstable]
        if not fresh:
            break
        items.extend(fresh)
        labels.extend(label_fn(fresh))
        calibration = fit_thresholds(
            items,
            labels,
            results,
            min_labels=min_labels,
            bootstrap=bootstrap,
            seed=seed,
            max_interval_width=max_interval_width,
        ).model_copy(update={"rounds": round_index + 1})
        unstable = {(m.evaluator_id, m.metric) for m in calibration.metrics if not m.stable}
        around = {(m.evaluator_id, m.metric): m.calibrated_threshold for m in calibration.metrics}
        around = {key: value for key, value in around.items() if value is not None}
        if not unstable:
            break
    return calibration
