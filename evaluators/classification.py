"""Classification: the expected answer is the true label, the actual answer the predicted one (seed 002).

Accuracy, precision, recall and F1 are properties of a whole set of predictions, so the run-level values come
from ``corpus_metrics`` (scikit-learn over all of a model's scored cases), with the confusion matrix as a
detail. Precision, recall and F1 are macro averages over every label seen as true or predicted, so a rare
class counts as much as a common one; F1 is the mean of the per-class F1 scores. Per case every metric is the
0/1 correctness of the label, which is exactly what those formulas give on a single case.

Which cases are classification cases: a short expected answer ("£25.18", "Email us.") is no class label,
and scoring it as one made a model right on all four yes/no cases of a bank suite score 0.556 (its five
other short answers were counted as wrong "labels"). A case is a classification case when the suite says
so, in the case (the category "classification") or once for the run (the ``labels`` parameter: its expected
answer is one of them), or when its expected answer is a label of a closed set every reader knows (yes/no,
true/false). Each case decides alone, so a lab scored in shards gets the same verdicts.

The predicted label is the answer itself, or the known label the answer opens with: "Yes, you can." predicts
"yes" ("Yes." and "yes" always did), so a model that explains its label is not counted wrong.
"""

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.base import CaseContext, Evaluator, Unscored, golden_pair, score_metric
from assay.evaluators.registry import register

from assay.models.evaluation import CaseScores, EvaluatorSpec

METRICS = ("accuracy", "precision", "recall", "f1")
CLASSIFICATION_CATEGORY = "classification"
CLOSED_SETS = (frozenset({"yes", "no"}), frozenset({"true", "false"}))
"""Label sets a case needs not declare: an expected answer "Yes" or "False" is a class label by itself."""


def normalise_label(text: str) -> str:
    """Compare labels, not their spelling: "Positive." and " positive" are the same label.

    Unicode compatibility forms are folded, case is folded, punctuation becomes a space and runs of
    whitespace collapse to one space.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(" " if unicodedata.category(char).startswith("P") else char for char in folded)
    return " ".join(spaced.split())


@register
@dataclass
class Classification(Evaluator):
    spec = EvaluatorSpec(
        id="classification",
        display_name="Classification",
        description=(
            "Binomial and multinomial classification: the expected answer is the true label and the actual "
            "answer the predicted label, both compared after folding case, whitespace and punctuation. Each "
            "model gets accuracy and macro-averaged precision, recall and F1 over all its cases, plus the "
            "confusion matrix."
        ),
        domain="classification",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis", "SR 11-7: Conceptual Soundness"],
        required_inputs=["expected_output", "actual_output"],
        metrics=[
            score_metric(
                "accuracy", "Accuracy", "Share of cases whose predicted label is the true label.", primary=True
            ),
            score_metric(
                "precision",
                "Precision",
                "Macro precision: per label, true positives / (true positives + false positives), averaged.",
            ),
            score_metric(
                "recall",
                "Recall",
                "Macro recall: per label, true positives / (true positives + false negatives), averaged.",
            ),
            score_metric("f1", "F1", "Macro F1: per label, 2 * precision * recall / (precision + recall), averaged."),
        ],
        keywords=["classification", "labels", "confusion-matrix", "accuracy", "f1"],
    )

    golden = golden_pair(
        "complaint.",
        "Compliment",
        expected_output="Complaint",
        categories=["classification"],
    )


    labels: str = field(
        default="",
        metadata={
            "description": "Comma-separated class labels of the suite: a case whose expected answer is one of "
            "them is a classification case. Cases in the category 'classification' and yes/no or true/false "
            "answers are classification cases without it."
        },
    )
    max_label_words: int = field(
        default=4,
        metadata={
            "description": "An expected answer longer than this many words is free text, not a class label: "
            "such cases are not applicable, so question-answering suites are not scored as classification."
        },
    )

    def __post_init__(self) -> None:
        self._declared = frozenset(label for part in self.labels.split(",") if (label := normalise_label(part)))

    def known_labels(self, case: CaseContext) -> frozenset[str]:
        """The labels ``case`` is classified among: the declared ones and the closed set its answer is in."""
        truth = normalise_label(case.expected_output)
        closed = next((labels for labels in CLOSED_SETS if truth in labels), frozenset())
        return self._declared | closed

    def not_applicable(self, case: CaseContext) -> str | None:
        if any(normalise_label(category) == CLASSIFICATION_CATEGORY for category in case.categories):
            return None
        words = len(case.expected_output.split())
        if words > self.max_label_words:
            return f"the expected answer has {words} words, more than a class label ({self.max_label_words})"
        if normalise_label(case.expected_output) in self.known_labels(case):
            return None
        declared = f"one of the labels parameter ({self.labels})" if self._declared else "a labels parameter"
        return (
            f"the expected answer {case.expected_output!r} is no class label: not yes/no or true/false, not "
            f"{declared}, and the case is not in the category 'classification'"
        )

    def predicted_label(self, case: CaseContext) -> str:
        """The label the answer states: the answer itself, or the longest known label it opens with."""
        answer = normalise_label(case.actual_output or "")
        labels = self.known_labels(case) | {normalise_label(case.expected_output)}
        if answer in labels:
            return answer
        opening = [label for label in labels if label and answer.startswith(label + " ")]
        return max(opening, key=len) if opening else answer

    def score(self, case: CaseContext) -> dict[str, float | None]:
        truth = normalise_label(case.expected_output)
        if not truth:
            raise Unscored(
                f"test case {case.test_case_key}: the expected answer {case.expected_output!r} holds no label "
                "once punctuation is removed"
            )
        # A punctuation-only answer is a failed prediction (label ""), not an unscored case: leaving it out
        # would reward a model for answering garbage on the hard cases.
        correct = float(self.predicted_label(case) == truth)
        return dict.fromkeys(METRICS, correct)

    def corpus_metrics(
        self, cases: Sequence[CaseContext], scores: Sequence[CaseScores]
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

        truths = [normalise_label(case.expected_output) for case in cases]
        predictions = [self.predicted_label(case) for case in cases]
        labels = sorted(set(truths) | set(predictions))
        precision, recall, f1, _ = precision_recall_fscore_support(
            truths, predictions, labels=labels, average="macro", zero_division=0.0
        )
        values = {
            "accuracy": accuracy_score(truths, predictions),
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
        matrix = confusion_matrix(truths, predictions, labels=labels)
        return (
            {key: round(float(value), 6) for key, value in values.items()},
            {"labels": labels, "confusion_matrix": matrix.tolist(), "axes": "rows: true label, columns: predicted"},
        )
