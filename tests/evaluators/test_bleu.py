"""BLEU: hand-computed n-gram precisions, brevity penalty, corpus detail and bad configuration."""

import math

import pytest

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from evaluators import CaseContext, Unscored, build_evaluator, run_evaluator

REFERENCE = "the cat sat on the mat"


def bleu(actual: str, expected: str = REFERENCE, **parameters: object) -> dict[str, float | None]:
    case = CaseContext.build(actual_output=actual, expected_output=expected)
    return build_evaluator("bleu", **parameters).score(case)


def test_a_perfect_match_scores_one_at_every_order() -> None:
    assert bleu(REFERENCE) == {"bleu_1": 1.0, "bleu_2": 1.0, "bleu_3": 1.0, "bleu_4": 1.0}


def test_one_wrong_word_gives_the_geometric_means_of_the_clipped_precisions() -> None:
    # 1-grams 5/6, 2-grams 4/5, 3-grams 3/4, 4-grams 2/3 match; same length, so no brevity penalty.
    scores = bleu("the cat sat on the rug")
    assert scores == {
        "bleu_1": round(5 / 6, 6),
        "bleu_2": round((5 / 6 * 4 / 5) ** (1 / 2), 6),
        "bleu_3": round((5 / 6 * 4 / 5 * 3 / 4) ** (1 / 3), 6),
        "bleu_4": round((5 / 6 * 4 / 5 * 3 / 4 * 2 / 3) ** (1 / 4), 6),
    }
    assert scores["bleu_4"] == 0.759836


def test_a_short_answer_pays_the_brevity_penalty() -> None:
    # Two of six words, both correct: precision 1, brevity penalty exp(1 - 6/2).
    assert bleu("the cat")["bleu_1"] == round(math.exp(-2), 6) == 0.135335


def test_unrelated_answer_scores_zero_without_smoothing_and_case_can_be_folded() -> None:
    assert bleu("dogs bark loudly", smooth_method="none")["bleu_1"] == 0.0
    assert bleu("THE CAT SAT ON THE MAT")["bleu_1"] == 0.0
    assert bleu("THE CAT SAT ON THE MAT", lowercase=True)["bleu_1"] == 1.0


def test_an_expected_answer_without_tokens_is_unscored_not_zero() -> None:
    with pytest.raises(Unscored, match="test case case: the expected answer has no tokens"):
        bleu("anything", expected="   ")


def test_tokenizers_that_would_download_are_refused() -> None:
    with pytest.raises(ValueError, match="tokenize must be one of"):
        build_evaluator("bleu", tokenize="spm")
    with pytest.raises(ValueError, match="smooth_method must be one of"):
        build_evaluator("bleu", smooth_method="laplace")


def test_model_aggregate_is_the_mean_and_corpus_bleu_is_a_detail() -> None:
    rows = [
        TestLabRow(
            test_case=TestCase(key="a", prompt="q", expected_output=REFERENCE), model_key="m", actual_output=REFERENCE
        ),
        TestLabRow(
            test_case=TestCase(key="b", prompt="q", expected_output=REFERENCE),
            model_key="m",
            actual_output="the cat sat on the rug",
        ),
    ]
    result = run_evaluator(build_evaluator("bleu"), TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows))
    aggregate = result.aggregates["m"]["bleu_1"]
    assert aggregate.mean == round((1.0 + 5 / 6) / 2, 6) and not aggregate.corpus_level and aggregate.passed == 2
    # Pooled counts: 1-grams 11/12 over both answers, equal lengths.
    assert result.model_details["m"]["corpus_bleu"]["bleu_1"] == round(11 / 12, 6)
