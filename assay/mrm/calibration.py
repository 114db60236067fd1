"""Human evaluation calibration (MRM step 5): a reviewer agrees or disagrees with a sample of metric verdicts,
and each primary metric's threshold is refitted to agree with the reviewer.

The manual calibrates "multiple small(er) subsets" rather than one big sample: label a few cases per metric,
fit, and draw more only for metrics whose threshold is still uncertain (its bootstrap interval is wide).
"""

import random
import re
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from sklearn.metrics import roc_auc_score

from assay.models import TestLab
from assay.models.evaluation import EvaluationResult, EvaluatorSpec, MetricMeta, on_good_side
from assay.models.mrm import NOT_MEANINGFUL, Calibration, MetricCalibration, ReviewItem, ReviewLabel
from assay.models.workflow import MIN_LABELS, REVIEW_SAMPLE_PER_METRIC
from assay.mrm.operational import quality_results
from assay.validity.agreement import reviewer_agreement

_GROUNDEDNESS = re.compile(r"ground|faithful|hallucinat")
CONTEXT_CHARS = 600
"""Characters of each retrieved passage a calibration item keeps (the form shows fewer)."""


def decision_rank(evaluator: EvaluatorSpec) -> int:
    """Which metrics a reviewer calibrates first, most decision-relevant first: groundedness (is the answer
    supported by what was retrieved), correctness (does it match the expected answer), relevancy, retrieval,
    then every other check."""
    reads = set(evaluator.required_inputs)
    if _GROUNDEDNESS.search(evaluator.id):
        return 0
    if "expected_output" in reads and "actual_output" in reads:
        return 1
    if "relevan" in evaluator.id:
        return 2
    if evaluator.domain == "retrieval" or "expected_retrieved_doc_uris" in reads:
        return 3
    return 4


def sample_for_review(
    lab: TestLab,
    results: Sequence[EvaluationResult],
    *,
    per_metric: int = REVIEW_SAMPLE_PER_METRIC,
    seed: int = 0,
    exclude: set[str] | frozenset[str] = frozenset(),
    around: Mapping[tuple[str, str], float] | None = None,
) -> list[ReviewItem]:
    """Per evaluator primary metric (most decision-relevant first, ``decision_rank``), up to ``per_metric`` scored
    cases, each with what the metric read (the retrieved passages, trimmed): half the ones nearest the threshold
    (alternating sides; a label there moves the threshold most), half drawn at random from each side so the
    reviewer also sees clear passes and clear fails. ``around`` moves the centre of the sample, e.g. to the
    current calibrated estimate when resampling; ``metric_passes`` stays the verdict of the threshold in force.
    Metrics without a threshold have no verdict to review; operational ones (latency, tokens, cost) are
    measurements, not verdicts a reviewer judges from the answer (``assay.mrm.operational``)."""
    rows = {(row.model_key, row.test_case.key): row for row in lab.rows}
    items: list[ReviewItem] = []
    for result in sorted(quality_results(results), key=lambda one: (decision_rank(one.evaluator), one.evaluator.id)):
        metric = result.evaluator.primary_metric
        threshold = result.threshold(metric.key)
        if threshold is None:
            continue
        candidates: list[ReviewItem] = []
        for scored in result.rows:
            score, row = scored.scores.get(metric.key), rows.get((scored.model_key, scored.test_case_key))
            item_id = f"{result.evaluator.id}/{metric.key}/{scored.model_key}/{scored.test_case_key}"
            if score is None or row is None or item_id in exclude:
                continue
            candidates.append(
                ReviewItem(
                    item_id=item_id,
                    evaluator_id=result.evaluator.id,
                    metric=metric.key,
                    model_key=scored.model_key,
                    test_case_key=scored.test_case_key,
                    question=row.test_case.prompt,
                    expected_output=row.test_case.expected_output,
                    actual_output=row.actual_output or "",
                    score=score,
                    metric_passes=metric.passes(score, threshold),
                    threshold=threshold,
                    higher_is_better=metric.higher_is_better,
                    reads=list(result.evaluator.required_inputs),
                    contexts=[chunk.text[:CONTEXT_CHARS] for chunk in row.context]
                    if "retrieved_context" in result.evaluator.required_inputs
                    else [],
                )
            )
        rng = random.Random(f"{seed}/{result.evaluator.id}/{metric.key}")
        centre = (around or {}).get((result.evaluator.id, metric.key), threshold)
        chosen = _stratified(candidates, centre, metric.higher_is_better, per_metric, rng)
        items.extend(sorted(chosen, key=lambda item: (item.score, item.item_id)))
    return items


def _stratified(
    candidates: list[ReviewItem], centre: float, higher_is_better: bool, size: int, rng: random.Random
) -> list[ReviewItem]:
    by_distance = sorted(candidates, key=lambda c: (abs(c.score - centre), c.item_id))
    good = [on_good_side(c.score, centre, higher_is_better) for c in by_distance]
    sides = [[c for c, g in zip(by_distance, good, strict=True) if g is side] for side in (False, True)]
    chosen: list[ReviewItem] = []
    near_quota = size // 2
    while len(chosen) < near_quota and any(sides):
        for side in sides:
            if side and len(chosen) < near_quota:
                chosen.append(side.pop(0))
    for side in sides:
        rng.shuffle(side)
    while len(chosen) < size and any(sides):
        for side in sides:
            if side and len(chosen) < size:
                chosen.append(side.pop())
    return chosen


def fit_thresholds(
    items: Sequence[ReviewItem],
    labels: Sequence[ReviewLabel],
    results: Sequence[EvaluationResult],
    *,
    min_labels: int = MIN_LABELS,
    bootstrap: int = 500,
    seed: int = 0,
    max_interval_width: float = 0.1,
    not_meaningful: Collection[str] = (),
) -> Calibration:
    """Per evaluator primary metric: the cut (the default or a midpoint between labelled scores) that agrees
    best with the reviewer (ties: the one nearest the default, so labels move it no further than they must),
    with a 95% bootstrap percentile interval, widened if needed to contain the estimate. ``max_interval_width``
    is a fraction of the metric's declared range (of the observed score spread when the range is unbounded):
    narrower is ``stable``. The default is kept, and ``method`` says why, with fewer than ``min_labels`` labels,
    one-class labels, or when no cut beats always answering the majority label (the score does not predict
    the reviewer). Unlabelled items are ignored; agreement is measured on the labelled items, and ``validity``
    reports it before and after with intervals (``assay.validity.agreement``). Operational metrics are not
    calibrated: nobody reviews them (see ``sample_for_review``). A metric in ``not_meaningful``
    ('<evaluator>/<metric>', the reviewer's mark) keeps its default, whatever its labels, and says so."""
    verdicts = {label.item_id: label for label in labels}
    used = [label for item in items if (label := verdicts.get(item.item_id)) is not None]
    metrics = []
    for result in quality_results(results):
        metric = result.evaluator.primary_metric
        default = result.threshold(metric.key)
        if default is None:
            continue
        mine = [item for item in items if (item.evaluator_id, item.metric) == (result.evaluator.id, metric.key)]
        labelled = [item for item in mine if item.item_id in verdicts]
        pairs = [(item.score, verdicts[item.item_id].human_passes) for item in labelled]
        span = _span(metric, [s for row in result.rows if (s := row.scores.get(metric.key)) is not None])
        fit = _fit_metric(
            result.evaluator.id, metric, default, pairs, span, min_labels, bootstrap, seed, max_interval_width
        )
        changed = sum(verdicts[item.item_id].human_passes != item.metric_passes for item in labelled)
        validity = reviewer_agreement(
            pairs,
            before=default,
            after=fit.calibrated_threshold,
            higher_is_better=metric.higher_is_better,
            labelled_by=[verdicts[item.item_id].reviewer for item in labelled],
            seed=seed,
        )
        if validity is not None:
            validity = validity.model_copy(update={"changed": changed})
        fit = fit.model_copy(update={"validity": validity, "labels_changed": changed})
        if f"{result.evaluator.id}/{metric.key}" in not_meaningful:
            fit = fit.model_copy(
                update={
                    "outcome": NOT_MEANINGFUL,
                    "calibrated_threshold": None,
                    "interval": None,
                    "agreement_after": fit.agreement_before,
                    "stable": False,
                    "method": "marked not meaningful for this system by the reviewer: default threshold kept, "
                    "left out of the verdict",
                }
            )
        metrics.append(fit)
    failures = [
        f"{item.model_key}:{item.test_case_key}"
        for item in items
        if not item.metric_passes and item.item_id in verdicts and verdicts[item.item_id].human_passes
    ]
    return Calibration(
        metrics=metrics,
        decided_by="person" if used else "no reviewer",
        reviewers=sorted({label.reviewer for label in used}),
        human_passed_failures=list(dict.fromkeys(failures)),
    )


def _span(metric: MetricMeta, scores: list[float]) -> float:
    low, high = metric.range
    if np.isfinite(low) and np.isfinite(high) and high > low:
        return float(high - low)
    return float(max(scores) - min(scores)) if scores else 0.0


def _fit_metric(
    evaluator_id: str,
    metric: MetricMeta,
    default: float,
    pairs: list[tuple[float, bool]],
    span: float,
    min_labels: int,
    bootstrap: int,
    seed: int,
    max_interval_width: float,
) -> MetricCalibration:
    scores = np.array([score for score, _ in pairs], dtype=np.float64)
    human = np.array([passes for _, passes in pairs], dtype=bool)
    before = _agreement(scores, human, default, metric.higher_is_better) if pairs else None
    calibration = MetricCalibration(
        evaluator_id=evaluator_id,
        metric=metric.key,
        higher_is_better=metric.higher_is_better,
        default_threshold=default,
        calibrated_threshold=None,
        labels=len(pairs),
        agreement_before=before,
        agreement_after=before,
        stable=False,
    )
    candidates = np.unique(scores)
    candidates = (candidates[:-1] + candidates[1:]) / 2
    if len(pairs) < min_labels:
        reason = f"too few labels ({len(pairs)} < {min_labels})"
    elif human.all() or not human.any():
        reason = f"one-class labels (all {'pass' if human.all() else 'fail'})"
    elif not len(candidates):
        reason = "every labelled case has the same score"
    else:
        reason = ""
    if reason:
        return calibration.model_copy(update={"method": f"{reason}: default threshold kept"})
    if before == 1.0:
        return calibration.model_copy(
            update={"outcome": "confirmed", "method": f"confirmed by {len(pairs)} labels: default threshold kept"}
        )
    weights = np.random.default_rng(seed).multinomial(len(pairs), np.full(len(pairs), 1 / len(pairs)), bootstrap)
    auc, auc_interval = _auc(scores if metric.higher_is_better else -scores, human, weights)
    calibration = calibration.model_copy(update={"auc": auc, "auc_interval": auc_interval})
    if auc_interval[0] <= 0.5:
        return calibration.model_copy(
            update={
                "outcome": "unsupported",
                "method": f"labels do not support this metric (AUC {auc:.2f} [{auc_interval[0]:.2f}, "
                f"{auc_interval[1]:.2f}], not above 0.5): default threshold kept",
            }
        )
    candidates = np.union1d(candidates, [default])
    point = float(_best_cuts(np.ones((1, len(pairs))), scores, human, candidates, metric, default)[0])
    after = _agreement(scores, human, point, metric.higher_is_better)
    majority = max(human.mean(), 1 - human.mean())
    if after <= majority:
        return calibration.model_copy(
            update={
                "outcome": "unsupported",
                "method": f"labels do not support this metric (best agreement {after:.2f} <= majority share "
                f"{majority:.2f}): default threshold kept",
            }
        )
    fitted = _best_cuts(weights, scores, human, candidates, metric, default)
    low, high = np.percentile(fitted, [2.5, 97.5]) if bootstrap else (point, point)
    interval = (min(float(low), point), max(float(high), point))
    return calibration.model_copy(
        update={
            "outcome": "calibrated",
            "calibrated_threshold": point,
            "interval": interval,
            "agreement_after": after,
            "stable": interval[1] - interval[0] < max_interval_width * span,
            "method": "max agreement over the default and midpoints of labelled scores, ties nearest the default; "
            f"95% percentile interval of {bootstrap} bootstrap refits",
        }
    )


def _auc(scores: np.ndarray, human: np.ndarray, weights: np.ndarray) -> tuple[float, tuple[float, float]]:
    """ROC AUC of the (higher-is-pass) scores against the labels, with the 95% percentile interval over the
    bootstrap resamples ``weights`` (a resample holding one class only has no AUC and is left out)."""
    auc = float(roc_auc_score(human, scores))
    both = [row for row in weights if human[row > 0].any() and not human[row > 0].all()]
    resampled = [roc_auc_score(human, scores, sample_weight=row) for row in both]
    if not resampled:
        return auc, (auc, auc)
    low, high = np.percentile(resampled, [2.5, 97.5])
    return auc, (float(low), float(high))


def _agreement(scores: np.ndarray, human: np.ndarray, threshold: float, higher_is_better: bool) -> float:
    return float(np.mean(on_good_side(scores, threshold, higher_is_better) == human))


def _best_cuts(
    weights: np.ndarray,
    scores: np.ndarray,
    human: np.ndarray,
    candidates: np.ndarray,
    metric: MetricMeta,
    anchor: float,
) -> np.ndarray:
    """For each row of case weights (a bootstrap resample's counts), the candidate cut with the most weighted
    agreement; ties go to the cut nearest ``anchor`` so labels move the threshold no further than they must."""
    grid = scores[:, None] - candidates[None, :]
    passes = on_good_side(grid, 0.0, metric.higher_is_better)
    agrees = (passes == human[:, None]).astype(np.float64)
    agreement = weights @ agrees
    best = np.isclose(agreement, agreement.max(axis=1, keepdims=True))
    distance = np.where(best, np.abs(candidates - anchor)[None, :], np.inf)
    return candidates[np.argmin(distance, axis=1)]
