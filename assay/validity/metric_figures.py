"""The figures of one score against the labels: AUC with its interval, the confusion figures at the threshold in
force and at the best cut on this data, and the same per group. Unscored rows are listed with their reason and
left out of every figure (``assay.validity.metrics``)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assay.models.validity import ConfusionFigures, GroupFigures, MetricValidity, ThresholdInForce, UnscoredRow
from assay.validity.metrics import (
    BOOTSTRAP_RESAMPLES,
    AtThreshold,
    at_threshold,
    auc_interval,
    best_threshold,
    roc_auc,
    scored_pairs,
)


@dataclass(frozen=True)
class LabelledScores:
    """One metric's values over the labelled rows, in row order (None: unscored, ``reasons`` says why)."""

    evaluator: str
    metric: str
    display_name: str
    higher_is_better: bool
    values: Sequence[float | None]
    reasons: Sequence[str | None]


def _confusion(figures: AtThreshold | None) -> ConfusionFigures | None:
    return None if figures is None else ConfusionFigures.model_validate(figures.as_dict())


def metric_validity(
    scores: LabelledScores,
    ids: Sequence[str],
    labels: Sequence[int],
    groups: Sequence[str | None],
    threshold: ThresholdInForce,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> MetricValidity:
    y, x, unscored_at = scored_pairs(labels, scores.values)
    missing = set(unscored_at)
    kept = [i for i in range(len(ids)) if i not in missing]
    unscored = [
        UnscoredRow(id=ids[i], reason=scores.reasons[i] or "no value for this metric on this row") for i in unscored_at
    ]
    interval = auc_interval(y, x, scores.higher_is_better, resamples=resamples, seed=seed)
    cut = threshold.value
    return MetricValidity(
        evaluator=scores.evaluator,
        metric=scores.metric,
        display_name=scores.display_name,
        higher_is_better=scores.higher_is_better,
        n=len(kept),
        n_unscored=len(unscored),
        unscored_ids=[row.id for row in unscored],
        unscored=unscored,
        auc=interval.estimate,
        auc_low=interval.low,
        auc_high=interval.high,
        threshold=threshold,
        at_threshold=_confusion(at_threshold(y, x, cut, scores.higher_is_better)) if cut is not None and kept else None,
        best_threshold=_confusion(best_threshold(y, x, scores.higher_is_better)),
        groups=_groups(kept, y, x, groups, len(ids), cut, scores.higher_is_better),
    )


def _groups(
    kept: list[int],
    y: np.ndarray,
    x: np.ndarray,
    groups: Sequence[str | None],
    rows: int,
    cut: float | None,
    higher_is_better: bool,
) -> dict[str, GroupFigures]:
    """Per named group: scored and unscored rows, AUC and accuracy at the threshold in force."""
    names = sorted({group for group in groups if group is not None})
    position = {row: index for index, row in enumerate(kept)}
    figures = {}
    for name in names:
        members = [row for row in range(rows) if groups[row] == name]
        scored = [position[row] for row in members if row in position]
        group_y, group_x = y[scored], x[scored]
        auc = roc_auc(group_y, group_x, higher_is_better) if scored else None
        accuracy = None
        if cut is not None and scored:
            accuracy = at_threshold(group_y, group_x, cut, higher_is_better).accuracy
        figures[name] = GroupFigures(
            n=len(scored),
            n_unscored=len(members) - len(scored),
            auc=None if auc is None else round(auc, 4),
            accuracy=accuracy,
        )
    return figures
