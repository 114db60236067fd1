"""Classification: label normalisation, per-case correctness and a 3-class confusion matrix by hand."""

import pytest
from assay.evaluators import CaseContext, Unscored, build_evaluator, run_evaluator
from assay.evaluators.classification import normalise_label

from assay.models import ModelHost, TestCase, TestLab, TestLabRow


@pytest.mark.parametrize(
    ("raw", "label"),
    [("Positive.", "positive"), ("  NEGATIVE \n", "negative"), ("“Neutral”!", "neutral"), ("non-urgent", "non urgent")],
)
def test_labels_fold_case_whitespace_and_punctuation(raw: str, label: str) -> None:
    assert normalise_label(raw) == label


def test_each_case_scores_its_correctness_on_every_metric() -> None:
    evaluator = build_evaluator("classification")
    right = evaluator.score(CaseContext.build(expected_output="Spam", actual_output=" spam. "))
    wrong = evaluator.score(CaseContext.build(expected_output="Spam", actual_output="ham"))
    assert right == {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert wrong == {"accuracy": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    punctuation_only = evaluator.score(CaseContext.build(expected_output="Spam", actual_output="..."))
    assert punctuation_only["accuracy"] == 0.0


def test_an_expected_label_of_punctuation_only_is_unscored() -> None:
    with pytest.raises(Unscored, match=r"test case case: the expected answer '\?!' holds no label"):
        build_evaluator("classification").score(CaseContext.build(expected_output="?!", actual_output="spam"))


def test_three_classes_give_the_hand_computed_confusion_matrix_and_macro_scores() -> None:
    pairs = [("a", "A"), ("a", "a."), ("a", "b"), ("b", "B"), ("b", "c"), ("c", "c")]
    rows = [
        TestLabRow(
            # declared: a short answer is no class label by itself (issue 25, item 15)
            test_case=TestCase(
                key=f"k{index}", prompt="classify", expected_output=truth, categories=["classification"]
            ),
            model_key="m",
            actual_output=answer,
        )
        for index, (truth, answer) in enumerate(pairs)
    ]
    lab = TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)
    result = run_evaluator(build_evaluator("classification"), lab)
    details = result.model_details["m"]
    assert details["labels"] == ["a", "b", "c"]
    assert details["confusion_matrix"] == [[2, 1, 0], [0, 1, 1], [0, 0, 1]]
    means = {key: aggregate.mean for key, aggregate in result.aggregates["m"].items()}
    # Precision per class 1, 1/2, 1/2; recall 2/3, 1/2, 1; F1 4/5, 1/2, 2/3.
    assert means == {
        "accuracy": round(4 / 6, 6),
        "precision": round(2 / 3, 6),
        "recall": round(13 / 18, 6),
        "f1": round(59 / 90, 6),
    }
    assert all(aggregate.corpus_level and aggregate.passed == 4 for aggregate in result.aggregates["m"].values())


def test_a_predicted_label_outside_the_true_ones_joins_the_matrix() -> None:
    rows = [
        TestLabRow(test_case=TestCase(key="x", prompt="q", expected_output="yes"), model_key="m", actual_output="Yes"),
        TestLabRow(test_case=TestCase(key="y", prompt="q", expected_output="no"), model_key="m", actual_output="maybe"),
        TestLabRow(test_case=TestCase(key="z", prompt="q", expected_output="no"), model_key="m", actual_output=None),
    ]
    result = run_evaluator(
        build_evaluator("classification"), TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)
    )
    assert result.model_details["m"]["labels"] == ["maybe", "no", "yes"]
    assert result.model_details["m"]["confusion_matrix"] == [[0, 0, 0], [1, 0, 0], [0, 0, 1]]
    accuracy = result.aggregates["m"]["accuracy"]
    assert (accuracy.mean, accuracy.scored, accuracy.unscored) == (0.5, 2, 1)
    # Macro over three labels: precision (0 + 0 + 1) / 3, F1 likewise.
    assert result.aggregates["m"]["precision"].mean == round(1 / 3, 6)


def test_free_text_answers_are_not_classification_cases() -> None:
    from assay.evaluators.selection import select_evaluators

    long_answer = TestLabRow(
        test_case=TestCase(key="qa", prompt="q", expected_output="The fee is twenty five pounds per card."),
        model_key="m", actual_output="It costs £25.",
    )
    lab = TestLab(name="qa", models=[ModelHost(key="m", type="t")], rows=[long_answer])
    result = run_evaluator(build_evaluator("classification"), lab)
    assert result.rows[0].unscored_reason == (
        "not applicable: the expected answer has 8 words, more than a class label (4)"
    )
    selected, skipped = select_evaluators(lab, ["all"])
    assert "classification" not in selected and skipped["classification"].startswith("applies to no test case")
