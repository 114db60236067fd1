"""The validity and comparison statistics now come from scipy and scikit-learn (``scipy.stats.mannwhitneyu`` and
``bootstrap``, ``sklearn.metrics``): they must publish the figures the hand-written versions published, to 1e-9.

The hand-written versions, as they stood before (``assay/validity/metrics.py`` and ``artifacts/comparison.py``),
are kept below as the reference. They are compared on the human-labelled validity sets of the team's shared
folder (``$ASSAY_SHARED_VALIDITY``, default ``../shared/validity`` beside the checkout; skipped where it is absent,
as on CI) scored by cheap deterministic scores, and always on seeded random data with ties, resamples holding one
class, and samples of 2 and 3 rows."""

import math
import os
from pathlib import Path

import numpy as np
import pytest
from assay.artifacts.comparison import RESAMPLES, bootstrap_delta
from scipy.stats import rankdata

from assay.models.evaluation import on_good_side
from assay.validity.baselines import score_baselines
from assay.validity.labels import load_labelled_set
from assay.validity.metrics import (
    CONFIDENCE,
    AtThreshold,
    Interval,
    accuracy_interval,
    at_threshold,
    auc_interval,
    best_threshold,
    roc_auc,
    scored_pairs,
)

ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = Path(os.environ.get("ASSAY_SHARED_VALIDITY", ROOT.parent / "shared" / "validity"))
TOLERANCE = 1e-9


# The reference: the hand-written statistics as they were in assay/validity/metrics.py and artifacts/comparison.py
# before the libraries replaced them, unchanged but for their names, the resample defaults written out and the
# layout of at_threshold's return (the same rounding of the same values).


def reference_roc_auc(labels: np.ndarray, scores: np.ndarray, higher_is_better: bool = True) -> float | None:
    positives, negatives = int(labels.sum()), int(len(labels) - labels.sum())
    if positives == 0 or negatives == 0:
        return None
    oriented = scores if higher_is_better else -scores
    ranks = rankdata(oriented)  # ties share their average rank
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def reference_auc_interval(
    labels: np.ndarray, scores: np.ndarray, higher_is_better: bool = True, *, resamples: int = 1000, seed: int = 0
) -> Interval:
    estimate = reference_roc_auc(labels, scores, higher_is_better)
    if estimate is None:
        return Interval(None, None, None)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        picked = rng.integers(0, len(labels), len(labels))
        value = reference_roc_auc(labels[picked], scores[picked], higher_is_better)
        if value is not None:
            draws.append(value)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail]) if draws else (estimate, estimate)
    return Interval(round(estimate, 4), round(float(low), 4), round(float(high), 4))


def reference_at_threshold(
    labels: np.ndarray, scores: np.ndarray, threshold: float, higher_is_better: bool = True
) -> AtThreshold:
    predicted = on_good_side(scores, threshold, higher_is_better)
    true_positive = int((predicted & (labels == 1)).sum())
    predicted_positive, actual_positive = int(predicted.sum()), int(labels.sum())
    precision = true_positive / predicted_positive if predicted_positive else None
    recall = true_positive / actual_positive if actual_positive else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = round(float((predicted == (labels == 1)).mean()), 4) if len(labels) else 0.0
    rounded = [None if value is None else round(value, 4) for value in (precision, recall, f1)]
    return AtThreshold(round(float(threshold), 6), accuracy, *rounded, passed=predicted_positive)


def reference_accuracy_interval(
    labels: np.ndarray,
    scores: np.ndarray,
    threshold: float,
    higher_is_better: bool = True,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Interval:
    if not len(labels):
        return Interval(None, None, None)
    predicted = on_good_side(scores, threshold, higher_is_better)
    correct = (predicted == (labels == 1)).astype(float)
    draws = correct[np.random.default_rng(seed).integers(0, len(correct), (resamples, len(correct)))].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail]) if resamples else (correct.mean(), correct.mean())
    return Interval(round(float(correct.mean()), 4), round(float(low), 4), round(float(high), 4))


def reference_bootstrap_delta(
    before: np.ndarray, after: np.ndarray, *, paired: bool, rng: np.random.Generator
) -> tuple[float, float, float]:
    tail = (1 - CONFIDENCE) / 2 * 100
    if paired:
        differences = after - before
        picks = rng.integers(0, len(differences), size=(RESAMPLES, len(differences)))
        samples = differences[picks].mean(axis=1)
        delta = float(differences.mean())
    else:
        before_picks = rng.integers(0, len(before), size=(RESAMPLES, len(before)))
        after_picks = rng.integers(0, len(after), size=(RESAMPLES, len(after)))
        samples = after[after_picks].mean(axis=1) - before[before_picks].mean(axis=1)
        delta = float(after.mean() - before.mean())
    low, high = np.percentile(samples, [tail, 100 - tail])
    return delta, float(low), float(high)


# Comparing: every figure equal to 1e-9, None exactly where the reference has None.

Figure = float | int | None


def assert_same(new: dict[str, Figure], old: dict[str, Figure], where: str) -> None:
    assert new.keys() == old.keys(), where
    for name, value in old.items():
        if value is None or new[name] is None:
            assert new[name] is None and value is None, f"{where}: {name} {new[name]} != {value}"
        else:
            assert math.isclose(new[name], value, rel_tol=0, abs_tol=TOLERANCE), f"{where}: {name}: {new}, {old}"


def check_labelled_scores(labels: np.ndarray, scores: np.ndarray, higher_is_better: bool, where: str) -> None:
    """Every validity figure of one score against its labels: AUC and its interval, the confusion figures at every
    cut best_threshold tries (and the one it picks), and the accuracy interval at the middle cut."""
    assert_same({"auc": roc_auc(labels, scores, higher_is_better)},
                {"auc": reference_roc_auc(labels, scores, higher_is_better)}, where)  # fmt: skip
    assert_same(auc_interval(labels, scores, higher_is_better).as_dict(),
                reference_auc_interval(labels, scores, higher_is_better).as_dict(), f"{where} AUC")  # fmt: skip
    distinct = np.unique(scores)
    cuts = [*(distinct[:-1] + distinct[1:]) / 2, float(distinct[0]) - 1, float(distinct[-1]) + 1]
    for cut in cuts:
        new, old = (at(labels, scores, cut, higher_is_better) for at in (at_threshold, reference_at_threshold))
        assert_same(new.as_dict(), old.as_dict(), f"{where} at {cut}")
    best = best_threshold(labels, scores, higher_is_better)
    if best is not None:
        assert_same(best.as_dict(), reference_at_threshold(labels, scores, best.threshold, higher_is_better).as_dict(),
                    f"{where} best threshold")  # fmt: skip
    middle = cuts[len(cuts) // 2] if len(cuts) > 2 else cuts[0]
    assert_same(accuracy_interval(labels, scores, middle, higher_is_better).as_dict(),
                reference_accuracy_interval(labels, scores, middle, higher_is_better).as_dict(),
                f"{where} accuracy interval")  # fmt: skip


def check_delta(before: np.ndarray, after: np.ndarray, paired: bool, seed: int, where: str) -> None:
    new = bootstrap_delta(before, after, paired=paired, rng=np.random.default_rng(seed))
    old = reference_bootstrap_delta(before, after, paired=paired, rng=np.random.default_rng(seed))
    assert_same(dict(zip(("delta", "low", "high"), new, strict=True)),
                dict(zip(("delta", "low", "high"), old, strict=True)), where)  # fmt: skip


# (a) The human-labelled validity sets of the shared folder, read as `assay validate` reads them.

SHARED_SETS = sorted(SHARED_DIR.glob("*.jsonl")) if SHARED_DIR.is_dir() else []


@pytest.mark.skipif(not SHARED_SETS, reason=f"the shared validity sets are not here ({SHARED_DIR}): not on CI")
@pytest.mark.parametrize("path", SHARED_SETS, ids=lambda path: path.stem)
def test_the_shared_validity_sets_get_the_same_figures(path: Path) -> None:
    labelled = load_labelled_set(path)
    labels = [row.label for row in labelled.rows]
    answers = [row.row.actual_output for row in labelled.rows]
    contexts = [[chunk.text for chunk in row.row.context] for row in labelled.rows]
    baselines = score_baselines(answers, contexts, None, ("token_precision", "answer_length"))
    noisy = np.round(np.asarray(labels) + np.random.default_rng(len(labels)).normal(0, 0.8, len(labels)), 1)
    scores = {**baselines.values, "label_plus_noise": list(noisy)}
    for name, higher_is_better in (("token_precision", True), ("answer_length", False), ("label_plus_noise", True)):
        y, x, _ = scored_pairs(labels, scores[name])
        check_labelled_scores(y, x, higher_is_better, f"{path.stem} {name}")
        groups = np.asarray([row.group or "" for row in labelled.rows])[[s is not None for s in scores[name]]]
        for group in sorted(set(groups)):
            in_group = groups == group
            assert_same({"auc": roc_auc(y[in_group], x[in_group], higher_is_better)},
                        {"auc": reference_roc_auc(y[in_group], x[in_group], higher_is_better)},
                        f"{path.stem} {name} group {group}")  # fmt: skip
    precision, length = (np.asarray(scores[name], dtype=float) for name in ("token_precision", "answer_length"))
    both = ~np.isnan(precision)
    check_delta(precision[both], noisy[both], True, 0, f"{path.stem} paired delta")
    y, counted = np.asarray(labels), ~np.isnan(length)
    check_delta(length[counted & (y == 0)], length[counted & (y == 1)], False, 0, f"{path.stem} unpaired delta")


# (b) Always: seeded random data.


def random_scores(rng: np.random.Generator, n: int, decimals: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels and scores that lean with them, rounded to ``decimals`` so that ties are many at 0 or 1."""
    labels = rng.integers(0, 2, n)
    return labels, np.round(rng.normal(labels * rng.uniform(-1, 2), 1), decimals)


@pytest.mark.parametrize("seed", range(12))
def test_random_labelled_scores_get_the_same_figures(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([2, 3, 4, 7, 25, 160, 400]))
    labels, scores = random_scores(rng, n, decimals=seed % 3)
    check_labelled_scores(labels, scores, bool(seed % 2), f"seed {seed} n {n}")


@pytest.mark.parametrize(
    "labels, scores",
    [
        ([1, 0], [0.2, 0.7]),  # n=2: half the resamples hold one class
        ([1, 0, 0], [0.5, 0.5, 0.1]),  # n=3 with a tie: most resamples hold one class
        ([0, 1, 1], [0.9, 0.1, 0.9]),
        ([1, 1, 1, 0], [0.3, 0.3, 0.3, 0.3]),  # every score tied: AUC 0.5, no cut
        ([1, 1], [0.1, 0.9]),  # one class: no AUC, no recall of 0s, precision defined
        ([0, 0, 0], [0.1, 0.5, 0.9]),  # no acceptable row: recall None
    ],
)
def test_tiny_samples_and_one_class_resamples_get_the_same_figures(labels: list[int], scores: list[float]) -> None:
    y, x = np.asarray(labels), np.asarray(scores, dtype=float)
    for higher_is_better in (True, False):
        check_labelled_scores(y, x, higher_is_better, f"{labels} {scores}")
        for cut in (-1.0, 0.5, 2.0):  # nothing passes or everything does
            new, old = (at(y, x, cut, higher_is_better) for at in (at_threshold, reference_at_threshold))
            assert_same(new.as_dict(), old.as_dict(), f"{labels} at {cut}")


def test_one_class_resamples_are_left_out_of_the_auc_interval_as_before() -> None:
    """Seeds where the resamples holding one class are many (n=3: about a third), and one with n=1,100 rows, which
    scipy draws in two batches: the draws and the figures stay the reference's."""
    for seed in range(4):
        labels, scores = np.array([0, 1, 0]), np.array([0.4, 0.6, 0.6])
        interval = auc_interval(labels, scores, seed=seed)
        assert interval == reference_auc_interval(labels, scores, seed=seed) and interval.low != interval.high
    labels, scores = random_scores(np.random.default_rng(7), 1100, decimals=2)
    for resamples in (0, 2, 1000):
        new = auc_interval(labels, scores, resamples=resamples, seed=3).as_dict()
        assert_same(new, reference_auc_interval(labels, scores, resamples=resamples, seed=3).as_dict(), "n=1100")


def test_the_accuracy_interval_of_one_row_or_no_resample_is_as_before() -> None:
    for labels, scores in (([1], [0.9]), ([0], [0.9]), ([], [])):
        y, x = np.asarray(labels, dtype=int), np.asarray(scores, dtype=float)
        for resamples in (0, 1000):
            assert_same(accuracy_interval(y, x, 0.5, resamples=resamples).as_dict(),
                        reference_accuracy_interval(y, x, 0.5, resamples=resamples).as_dict(), f"{labels}")  # fmt: skip
    y, x = random_scores(np.random.default_rng(5), 50, decimals=1)
    assert_same(accuracy_interval(y, x, 0.3, resamples=0).as_dict(),
                reference_accuracy_interval(y, x, 0.3, resamples=0).as_dict(), "no resample")  # fmt: skip


@pytest.mark.parametrize("seed", range(10))
def test_random_bootstrap_deltas_get_the_same_figures(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = (int(rng.choice([2, 3, 5, 40, 300])) for _ in range(2))
    before = np.round(rng.uniform(0, 1, n), seed % 3)  # rounded: ties, and paired differences of 0
    after = np.round(before + rng.normal(0.05, 0.2, n), seed % 3)
    check_delta(before, after, True, seed, f"paired n {n}")
    other = np.round(rng.uniform(0, 1, m), seed % 3)
    check_delta(before, other, False, seed, f"unpaired n {n} m {m}")
    check_delta(np.zeros(n), np.zeros(n), True, seed, "no change")
