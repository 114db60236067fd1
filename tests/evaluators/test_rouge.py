"""ROUGE: hand-computed F-measures on small pairs, stemming, and unreadable references."""

import pytest
from assay.evaluators import CaseContext, Unscored, build_evaluator


def rouge(actual: str, expected: str, **parameters: object) -> dict[str, float | None]:
    evaluator = build_evaluator("rouge", **parameters)
    return evaluator.score(CaseContext.build(actual_output=actual, expected_output=expected))


def test_identical_texts_score_one() -> None:
    assert rouge("The cat sat on the mat.", "the cat sat on the mat") == {
        "rouge_1": 1.0,
        "rouge_2": 1.0,
        "rouge_l": 1.0,
    }


def test_one_substituted_word() -> None:
    # 5 of 6 words, 4 of 5 word pairs and an LCS of 5 words are shared; both texts have the same length.
    assert rouge("the cat sat on the rug", "the cat sat on the mat") == {
        "rouge_1": round(5 / 6, 6),
        "rouge_2": 0.8,
        "rouge_l": round(5 / 6, 6),
    }


def test_f_measure_balances_precision_and_recall() -> None:
    # "the cat" against six words: precision 1, recall 2/6, F = 2 * 1 * (1/3) / (1 + 1/3) = 0.5.
    scores = rouge("the cat", "the cat sat on the mat")
    assert scores["rouge_1"] == 0.5 and scores["rouge_l"] == 0.5
    # One shared pair of one in the answer and five in the reference: F = 2 * 1 * 0.2 / 1.2.
    assert scores["rouge_2"] == round(2 * 0.2 / 1.2, 6)


def test_lcs_respects_word_order_where_unigrams_do_not() -> None:
    scores = rouge("mat the on sat cat the", "the cat sat on the mat")
    assert scores["rouge_1"] == 1.0
    # The longest common subsequence is "the on the": 3 of 6 words on both sides.
    assert scores["rouge_l"] == 0.5
    assert scores["rouge_2"] == 0.0


def test_stemming_is_a_parameter() -> None:
    assert rouge("cats running", "cat runs")["rouge_1"] == 0.0
    assert rouge("cats running", "cat runs", use_stemmer=True)["rouge_1"] == 1.0


def test_a_reference_rouge_cannot_tokenize_is_unscored() -> None:
    with pytest.raises(Unscored, match="test case case: the expected answer has no ASCII letters or digits"):
        rouge("利率是百分之三", "利率是百分之三")
