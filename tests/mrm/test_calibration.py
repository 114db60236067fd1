"""Calibration of metric thresholds (MRM step 5) on hand-made scores and labels with known answers."""

from collections.abc import Sequence

import pytest

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.mrm import ReviewItem, ReviewLabel
from assay.mrm.calibration import fit_thresholds, sample_for_review
from tests.support.calibration_rounds import calibrate_until_stable


def result(
    scores: Sequence[float | None],
    *,
    threshold: float | None = 0.75,
    higher_is_better: bool = True,
    evaluator_id: str = "sim",
    parameters: dict | None = None,
) -> EvaluationResult:
    metric = MetricMeta(
        key="score",
        display_name="Score",
        description="d",
        threshold=threshold,
        higher_is_better=higher_is_better,
        is_primary=True,
    )
    spec = EvaluatorSpec(
        id=evaluator_id,
        display_name=evaluator_id,
        description="d",
        domain="generation",
        required_inputs=["actual_output"],
        metrics=[metric],
    )
    rows = [
        CaseScores(test_case_key=f"c{i}", model_key="m", scores={} if s is None else {"score": s})
        for i, s in enumerate(scores)
    ]
    return EvaluationResult(evaluator=spec, rows=rows, parameters=parameters or {})


def lab(count: int, expected: str = "") -> TestLab:
    rows = [
        TestLabRow(
            test_case=TestCase(key=f"c{i}", prompt=f"question {i}", expected_output=expected),
            model_key="m",
            actual_output=f"answer {i}",
        )
        for i in range(count)
    ]
    return TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)


def labelled(scores: Sequence[float], verdicts: Sequence[bool], reviewer: str = "ana", **kwargs):
    """Items for every score, a reviewer's verdict for each, and the result they came from."""
    evaluation = result(scores, **kwargs)
    items = sample_for_review(lab(len(scores)), [evaluation], per_metric=len(scores))
    by_score = {item.score: item for item in items}
    labels = [
        ReviewLabel(item_id=by_score[s].item_id, human_passes=v, reviewer=reviewer)
        for s, v in zip(scores, verdicts, strict=True)
    ]
    return items, labels, evaluation


def test_the_fitted_threshold_separates_the_reviewers_passes_from_fails() -> None:
    items, labels, evaluation = labelled([0.2, 0.3, 0.4, 0.6, 0.7, 0.8], [False] * 3 + [True] * 3)
    calibration = fit_thresholds(items, labels, [evaluation], seed=1)
    (fit,) = calibration.metrics
    assert fit.calibrated_threshold == pytest.approx(0.5)
    assert (fit.default_threshold, fit.labels) == (0.75, 6)
    assert fit.agreement_before == pytest.approx(4 / 6)  # 0.6 and 0.7 fail the default but the reviewer passes them
    assert fit.agreement_after == 1.0
    low, high = fit.interval
    assert 0.25 <= low <= 0.5 <= high <= 0.75
    assert calibration.threshold("sim", "score") == pytest.approx(0.5)
    assert calibration.human_passed_failures == ["m:c3", "m:c4"]
    assert calibration.decided_by == "person"
    assert fit_thresholds(items, labels, [evaluation], max_interval_width=1.0).metrics[0].stable
    assert not fit_thresholds(items, labels, [evaluation], max_interval_width=0.01).metrics[0].stable


def test_lower_is_better_metrics_pass_below_the_threshold() -> None:
    items, labels, evaluation = labelled(
        [0.1, 0.2, 0.3, 0.5, 0.6, 0.7], [True] * 3 + [False] * 3, threshold=0.25, higher_is_better=False
    )
    (fit,) = fit_thresholds(items, labels, [evaluation]).metrics
    assert fit.higher_is_better is False
    assert fit.calibrated_threshold == pytest.approx(0.4)
    assert (fit.agreement_before, fit.agreement_after) == (pytest.approx(5 / 6), 1.0)


def test_a_default_every_label_agrees_with_is_confirmed_not_calibrated() -> None:
    items, labels, evaluation = labelled([0.2, 0.5, 0.7, 0.8, 0.9, 0.95], [False, False, False, True, True, True])
    calibration = fit_thresholds(items, labels, [evaluation])
    (fit,) = calibration.metrics
    assert (fit.outcome, fit.calibrated_threshold, fit.agreement_before, fit.agreement_after) == (
        "confirmed", None, 1.0, 1.0
    )  # fmt: skip
    assert fit.method == "confirmed by 6 labels: default threshold kept"
    assert calibration.threshold("sim", "score") == 0.75


def test_labels_the_scores_do_not_separate_never_calibrate() -> None:
    """AUC 0.5 against the labels: one label disagrees with the metric, but the scores say nothing about the
    labels, so the threshold is not moved and the metric is 'unsupported'."""
    scores = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9]
    verdicts = [True, False, False, True, True, False, False, True]
    items, labels, evaluation = labelled(scores, verdicts, threshold=0.5)
    (fit,) = fit_thresholds(items, labels, [evaluation]).metrics
    assert fit.auc == pytest.approx(0.5) and fit.auc_interval is not None and fit.auc_interval[0] < 0.5
    assert (fit.outcome, fit.calibrated_threshold) == ("unsupported", None)
    assert fit.method.startswith("labels do not support this metric (AUC 0.50")


def test_labels_the_scores_separate_calibrate() -> None:
    items, labels, evaluation = labelled([0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95], [False] * 3 + [True] * 5)
    (fit,) = fit_thresholds(items, labels, [evaluation]).metrics
    assert fit.outcome == "calibrated" and fit.calibrated_threshold == pytest.approx(0.55)
    assert fit.auc == 1.0 and fit.auc_interval == (1.0, 1.0)


@pytest.mark.parametrize(
    ("scores", "verdicts", "reason"),
    [
        ([0.2, 0.3, 0.4, 0.6, 0.7, 0.8], [True] * 6, "one-class labels (all pass)"),
        ([0.2, 0.8, 0.9], [False, True, True], "too few labels (3 < 6)"),
        ([0.2, 0.3, 0.4, 0.6, 0.7, 0.8], [True, True, True, False, False, False], "labels do not support this metric"),
    ],
)
def test_the_default_is_kept_when_the_labels_cannot_move_it(
    scores: list[float], verdicts: list[bool], reason: str
) -> None:
    items, labels, evaluation = labelled(scores, verdicts)
    calibration = fit_thresholds(items, labels, [evaluation])
    (fit,) = calibration.metrics
    assert (fit.calibrated_threshold, fit.interval, fit.stable) == (None, None, False)
    assert fit.method.startswith(reason) and fit.method.endswith("default threshold kept")
    assert fit.agreement_after == fit.agreement_before
    assert calibration.threshold("sim", "score") == 0.75


def test_a_run_threshold_override_is_the_default_and_unlabelled_metrics_are_listed() -> None:
    items, labels, evaluation = labelled([0.2, 0.3, 0.4, 0.6, 0.7, 0.8], [False] * 3 + [True] * 3)
    overridden = result([0.1], parameters={"metric_threshold": 0.65}, evaluator_id="other")
    calibration = fit_thresholds(items, labels, [evaluation, overridden])
    other = calibration.metrics[1]
    assert (other.evaluator_id, other.default_threshold, other.labels, other.agreement_before) == (
        "other",
        0.65,
        0,
        None,
    )


def test_decided_by_says_who_labelled_and_no_labels_is_no_reviewer() -> None:
    items, labels, evaluation = labelled([0.2, 0.3, 0.4, 0.6, 0.7, 0.8], [False] * 3 + [True] * 3, reviewer="ana")
    mixed = [labels[0].model_copy(update={"reviewer": "bo"}), *labels[1:]]
    calibration = fit_thresholds(items, mixed, [evaluation])
    assert (calibration.decided_by, calibration.reviewers) == ("person", ["ana", "bo"])
    unattended = fit_thresholds(items, [], [evaluation])
    assert (unattended.decided_by, unattended.reviewers) == ("no reviewer", [])
    assert unattended.metrics[0].calibrated_threshold is None


def test_the_sample_covers_both_sides_and_the_cases_nearest_the_threshold() -> None:
    scores = [round(0.05 * i, 2) for i in range(20)] + [None]
    evaluation = result(scores, threshold=0.5)
    items = sample_for_review(lab(21), [evaluation], per_metric=8, seed=3)
    chosen = [item.score for item in items]
    assert len(items) == 8 and chosen == sorted(chosen)
    assert {0.4, 0.45, 0.5, 0.55} <= set(chosen)
    assert sum(not item.metric_passes for item in items) == 4 and sum(item.metric_passes for item in items) == 4
    assert all(item.metric_passes == (item.score >= 0.5) for item in items)
    assert items == sample_for_review(lab(21), [evaluation], per_metric=8, seed=3)
    skipped = {"sim/score/m/c9", "sim/score/m/c10"}  # 0.45 and 0.5
    again = sample_for_review(lab(21), [evaluation], per_metric=8, seed=3, exclude=skipped)
    assert not skipped & {item.item_id for item in again}
    assert {0.35, 0.4, 0.55, 0.6} <= {item.score for item in again}
    assert sample_for_review(lab(21), [result(scores, threshold=None)]) == []


def test_resampling_labels_each_case_once_and_converges_on_the_true_cut() -> None:
    scores = [round(0.025 * i, 3) for i in range(40)]
    evaluation = result(scores, threshold=0.75)
    seen: list[list[ReviewItem]] = []

    def reviewer(batch: list[ReviewItem]) -> list[ReviewLabel]:
        seen.append(batch)
        return [ReviewLabel(item_id=item.item_id, human_passes=item.score >= 0.5, reviewer="ana") for item in batch]

    calibration = calibrate_until_stable(lab(40), [evaluation], reviewer, max_rounds=4, seed=0)
    labelled_ids = [item.item_id for batch in seen for item in batch]
    assert len(labelled_ids) == len(set(labelled_ids))
    assert calibration.rounds == len(seen) >= 2
    # round 1 fits 0.5 (between the labelled 0.3 and 0.7); round 2 then samples around 0.5, not the default 0.75
    assert {0.45, 0.475, 0.5, 0.525} <= {item.score for item in seen[1]}
    (fit,) = calibration.metrics
    assert fit.calibrated_threshold == pytest.approx(0.4875)
    assert fit.labels == len(labelled_ids)


def test_a_metric_marked_not_meaningful_keeps_its_default_whatever_its_labels() -> None:
    items, labels, evaluation = labelled([0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95], [False] * 3 + [True] * 5)
    (fit,) = fit_thresholds(items, labels, [evaluation], not_meaningful={"sim/score"}).metrics
    assert (fit.outcome, fit.calibrated_threshold, fit.labels) == ("not_meaningful", None, 8)
    assert fit.method.startswith("marked not meaningful for this system by the reviewer")
    (other,) = fit_thresholds(items, labels, [evaluation], not_meaningful={"other/score"}).metrics
    assert other.outcome == "calibrated"


def test_the_sample_puts_groundedness_first_with_the_passages_it_read() -> None:
    from assay.models.lab import RetrievedChunk

    grounded = result([0.2, 0.9], evaluator_id="groundedness")
    grounded.evaluator.required_inputs = ["actual_output", "retrieved_context"]
    similar = result([0.3, 0.8], evaluator_id="answer_similarity")
    similar.evaluator.required_inputs = ["actual_output", "expected_output"]
    relevant = result([0.3, 0.8], evaluator_id="answer_relevancy")
    tested = lab(2)
    for row in tested.rows:
        row.context = [RetrievedChunk(text="Refunds take 14 days. " * 40)]
    items = sample_for_review(tested, [relevant, similar, grounded], per_metric=2)
    assert [item.evaluator_id for item in items[::2]] == ["groundedness", "answer_similarity", "answer_relevancy"]
    assert items[0].reads == ["actual_output", "retrieved_context"]
    assert len(items[0].contexts) == 1 and len(items[0].contexts[0]) == 600  # trimmed
    assert items[2].contexts == []  # similarity does not read the passages
