"""The calibration step's validity figures: a metric's agreement with the reviewer's labels before and after
its threshold was refitted, on a small example whose AUC and accuracies are worked out by hand below."""

import numpy as np
import pytest

from assay.models.mrm import Calibration
from assay.mrm.calibration import fit_thresholds
from assay.validity.metrics import accuracy_interval
from tests.mrm.test_calibration import labelled

# Reviewer: pass (acceptable) = True, fail = False. The 0.9 answer is shown but skipped (no label).
SCORES = [0.2, 0.3, 0.45, 0.55, 0.6, 0.7, 0.8, 0.9]
VERDICTS = [False, False, True, False, True, True, True, True]
# AUC: 4 acceptable x 3 unacceptable = 12 pairs; 0.45 beats 0.2 and 0.3 but not 0.55 (2), 0.6, 0.7 and 0.8
# beat all three (3 each): 11 / 12.
AUC = 11 / 12
# Before, at the default 0.75, only 0.8 passes: right on 0.2, 0.3, 0.55 (fails) and 0.8; wrong on 0.45, 0.6,
# 0.7: 4 / 7. The refit ties 0.375 and 0.575 at 6 / 7 and keeps the one nearest the default: 0.575, wrong only
# on 0.45.
BEFORE, AFTER = 4 / 7, 6 / 7


def fitted(scores: list[float], **kwargs) -> Calibration:
    items, labels, evaluation = labelled(scores, VERDICTS, reviewer="Bo Chen", **kwargs)
    skipped = labels[:-1]
    return fit_thresholds(items, skipped, [evaluation], seed=3)


def test_before_and_after_figures_match_the_hand_computation() -> None:
    (fit,) = fitted(SCORES).metrics
    validity = fit.validity
    assert fit.calibrated_threshold == pytest.approx(0.575)
    assert (validity.n, validity.acceptable) == (7, 4)  # the skipped answer is no label
    assert validity.auc == pytest.approx(AUC, abs=1e-4)
    assert validity.before.threshold == 0.75 and validity.before.accuracy == pytest.approx(BEFORE, abs=1e-4)
    assert validity.after.threshold == pytest.approx(0.575)
    assert validity.after.accuracy == pytest.approx(AFTER, abs=1e-4)
    assert validity.before.accuracy == pytest.approx(fit.agreement_before, abs=1e-4)
    assert validity.after.accuracy == pytest.approx(fit.agreement_after, abs=1e-4)
    assert validity.refitted is True  # the after figure is in-sample
    for low, estimate, high in [
        (validity.auc_low, validity.auc, validity.auc_high),
        (validity.before.accuracy_low, validity.before.accuracy, validity.before.accuracy_high),
        (validity.after.accuracy_low, validity.after.accuracy, validity.after.accuracy_high),
    ]:
        assert 0 <= low <= estimate <= high <= 1 and low < high  # seven labels: a wide interval
    assert validity.labelled_by == ["Bo Chen"] and validity.source == "reviewer labels, MRM step 5"
    assert fitted(SCORES).metrics[0].validity == validity  # a fixed seed: the same figures every time


def test_a_lower_is_better_metric_is_oriented_so_the_figures_are_the_same() -> None:
    flipped = [round(1 - score, 6) for score in SCORES]
    (fit,) = fitted(flipped, higher_is_better=False, threshold=0.25).metrics
    assert fit.validity.auc == pytest.approx(AUC, abs=1e-4)
    assert fit.validity.before.accuracy == pytest.approx(BEFORE, abs=1e-4)
    assert fit.validity.after.accuracy == pytest.approx(AFTER, abs=1e-4)


def test_before_is_the_threshold_in_force_and_a_kept_one_is_the_same_after() -> None:
    (fit,) = fitted(SCORES, threshold=0.5).metrics  # at 0.5 wrong on 0.45 and 0.55: 5 / 7
    assert fit.validity.before.accuracy == pytest.approx(5 / 7, abs=1e-4)
    assert fit.calibrated_threshold == pytest.approx(0.575)
    assert fit.validity.after.accuracy == pytest.approx(AFTER, abs=1e-4)
    items, labels, evaluation = labelled(SCORES[:4], VERDICTS[:4], reviewer="Bo Chen")
    (few,) = fit_thresholds(items, labels, [evaluation]).metrics  # 4 labels < 6: the default is kept
    assert few.calibrated_threshold is None and few.validity.refitted is False
    assert few.validity.after == few.validity.before and few.validity.n == 4


def test_without_a_reviewer_there_are_no_figures_and_old_documents_still_read() -> None:
    items, _, evaluation = labelled(SCORES, VERDICTS)
    calibration = fit_thresholds(items, [], [evaluation])
    assert calibration.decided_by == "no reviewer" and calibration.metrics[0].validity is None
    assert calibration.schema_version == 2
    version_1 = {**calibration.model_dump(mode="json"), "schema_version": 1}
    for metric in version_1["metrics"]:
        metric.pop("validity")
    assert Calibration.model_validate(version_1).metrics[0].validity is None


def test_accuracy_interval_is_exact_when_every_verdict_agrees() -> None:
    labels, scores = np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.8, 0.9])
    interval = accuracy_interval(labels, scores, 0.5)
    assert (interval.estimate, interval.low, interval.high) == (1.0, 1.0, 1.0)
    assert accuracy_interval(labels, scores, 0.5, higher_is_better=False).estimate == 0.0
    assert accuracy_interval(labels[:0], scores[:0], 0.5).estimate is None
