"""A metric's agreement with the reviewer of MRM step 5, before and after its threshold was calibrated.

What a reviewer's label means as ground truth. Each review item shows one answer with one metric's verdict,
and the reviewer marks the *answer* **pass** (acceptable) or **fail** (unacceptable), or skips it
(``flows.review_forms.calibration_review``; ``passed_item_ids`` / ``failed_item_ids`` of an approvals file).
So a label is the person's verdict on the answer, not on the metric:

- agreeing with a fail verdict means the answer is not acceptable (label 0);
- disagreeing with a fail verdict means it is acceptable (label 1);
- agreeing with a pass verdict means acceptable (1); disagreeing with a pass verdict means not acceptable (0);
- a skipped item is no label and is left out of ``n``.

A label counts only for the metric it was given on: the reviewer judged the answer in the light of that
metric's question, so it is not carried over to the same answer under another metric. Only a person's labels
reach this code (``flows.mrm_steps.person_labels``): a policy never labels, so no figure here is a policy's output.

Two cautions a committee should read with the figures: the review sample puts half its items near the
threshold (``sample_for_review``), where verdicts are hardest, so the figures describe that sample rather than
every answer of the run; and the calibrated threshold is fitted on these same labels, so the accuracy after
calibration is in-sample (``refitted``), an optimistic figure."""

from collections.abc import Sequence

import numpy as np

from assay.models.mrm import CalibrationValidity, ThresholdAgreement
from assay.validity.metrics import accuracy_interval, auc_interval


def reviewer_agreement(
    pairs: Sequence[tuple[float, bool]],
    *,
    before: float,
    after: float | None,
    higher_is_better: bool,
    labelled_by: Sequence[str],
    seed: int = 0,
) -> CalibrationValidity | None:
    """Figures for (score, reviewer passes) pairs; ``before``: the threshold in force before calibration,
    ``after``: the calibrated one (None: the threshold was kept, so after equals before). None without labels."""
    if not pairs:
        return None
    scores = np.array([score for score, _ in pairs], dtype=float)
    labels = np.array([int(passes) for _, passes in pairs], dtype=int)
    auc = auc_interval(labels, scores, higher_is_better, seed=seed)
    return CalibrationValidity(
        n=len(pairs),
        acceptable=int(labels.sum()),
        auc=auc.estimate,
        auc_low=auc.low,
        auc_high=auc.high,
        before=_at(labels, scores, before, higher_is_better, seed),
        after=_at(labels, scores, before if after is None else after, higher_is_better, seed),
        refitted=after is not None,
        labelled_by=sorted(set(labelled_by)),
    )


def _at(
    labels: np.ndarray, scores: np.ndarray, threshold: float, higher_is_better: bool, seed: int
) -> ThresholdAgreement:
    accuracy = accuracy_interval(labels, scores, threshold, higher_is_better, seed=seed)
    assert accuracy.estimate is not None and accuracy.low is not None and accuracy.high is not None
    return ThresholdAgreement(
        threshold=threshold, accuracy=accuracy.estimate, accuracy_low=accuracy.low, accuracy_high=accuracy.high
    )
