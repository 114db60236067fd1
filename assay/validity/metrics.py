"""Agreement figures between a score and human labels: ROC-AUC with a bootstrap interval, the confusion
figures at a threshold, and the threshold that fits this data best.

Labels are 1 (acceptable) / 0 (not); a score is oriented by ``higher_is_better`` so that AUC always means "the
chance a random acceptable answer scores better than a random unacceptable one". Unscored rows (None or NaN)
are left out and counted by the caller, never scored 0."""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import rankdata

from assay.models.evaluation import on_good_side

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    estimate: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, float | None]:
        return asdict(self)


@dataclass(frozen=True)
class AtThreshold:
    threshold: float
    accuracy: float
    precision: float | None
    recall: float | None
    f1: float | None
    passed: int

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def scored_pairs(
    labels: Sequence[int], scores: Sequence[float | None]
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(labels, scores) of the scored rows and the positions of the unscored ones (None, NaN or infinite)."""
    unscored = [i for i, s in enumerate(scores) if s is None or not math.isfinite(s)]
    missing = set(unscored)
    kept = [i for i in range(len(scores)) if i not in missing]
    return np.asarray([labels[i] for i in kept], dtype=int), np.asarray([scores[i] for i in kept], float), unscored


def roc_auc(labels: np.ndarray, scores: np.ndarray, higher_is_better: bool = True) -> float | None:
    """Mann-Whitney ROC-AUC (ties count one half); None when only one label is present."""
    positives, negatives = int(labels.sum()), int(len(labels) - labels.sum())
    if positives == 0 or negatives == 0:
        return None
    oriented = scores if higher_is_better else -scores
    ranks = rankdata(oriented)  # ties share their average rank
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def auc_interval(
    labels: np.ndarray,
    scores: np.ndarray,
    higher_is_better: bool = True,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """ROC-AUC and its percentile bootstrap interval (rows resampled with replacement, fixed seed)."""
    estimate = roc_auc(labels, scores, higher_is_better)
    if estimate is None:
        return Interval(None, None, None)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        picked = rng.integers(0, len(labels), len(labels))
        value = roc_auc(labels[picked], scores[picked], higher_is_better)
        if value is not None:
            draws.append(value)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail]) if draws else (estimate, estimate)
    return Interval(round(estimate, 4), round(float(low), 4), round(float(high), 4))


def at_threshold(
    labels: np.ndarray, scores: np.ndarray, threshold: float, higher_is_better: bool = True
) -> AtThreshold:
    """Confusion figures when "passes the threshold" is read as "acceptable" (label 1)."""
    predicted = on_good_side(scores, threshold, higher_is_better)
    true_positive = int((predicted & (labels == 1)).sum())
    predicted_positive, actual_positive = int(predicted.sum()), int(labels.sum())
    precision = true_positive / predicted_positive if predicted_positive else None
    recall = true_positive / actual_positive if actual_positive else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return AtThreshold(
        threshold=round(float(threshold), 6),
        accuracy=round(float((predicted == (labels == 1)).mean()), 4) if len(labels) else 0.0,
        precision=None if precision is None else round(precision, 4),
        recall=None if recall is None else round(recall, 4),
        f1=None if f1 is None else round(f1, 4),
        passed=predicted_positive,
    )


def best_threshold(labels: np.ndarray, scores: np.ndarray, higher_is_better: bool = True) -> AtThreshold | None:
    """The cut with the highest accuracy on this data (ties: the one nearest the middle of the tied run),
    a cut halfway between neighbouring distinct scores so it does not sit on a row."""
    distinct = np.unique(scores)
    if len(distinct) < 2:
        return None
    cuts = (distinct[:-1] + distinct[1:]) / 2
    figures = [at_threshold(labels, scores, cut, higher_is_better) for cut in cuts]
    top = max(figure.accuracy for figure in figures)
    tied = [figure for figure in figures if figure.accuracy == top]
    return tied[len(tied) // 2]


def accuracy_interval(
    labels: np.ndarray,
    scores: np.ndarray,
    threshold: float,
    higher_is_better: bool = True,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Accuracy of "passes ``threshold``" read as "acceptable", with its percentile bootstrap interval (rows
    resampled with replacement, fixed seed). The threshold is held fixed: a threshold fitted on these same
    rows gets an optimistic figure, and its interval leaves out the fitting's own variation."""
    if not len(labels):
        return Interval(None, None, None)
    predicted = on_good_side(scores, threshold, higher_is_better)
    correct = (predicted == (labels == 1)).astype(float)
    draws = correct[np.random.default_rng(seed).integers(0, len(correct), (resamples, len(correct)))].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail]) if resamples else (correct.mean(), correct.mean())
    return Interval(round(float(correct.mean()), 4), round(float(low), 4), round(float(high), 4))
