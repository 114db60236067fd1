"""BLEU: hand-computed n-gram precisions, brevity penalty, corpus detail and bad configuration."""

import math

import pytest
from assay.evaluators import CaseContext, Unscored, build_evaluator, run_evaluator

from assay.models import ModelHost, TestCase, TestLab, TestLabRow

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


PAIRS = [
    ("the cat sat on the mat", REFERENCE),
    ("The Easy Saver pays 3.2% AER on balances up to £85,000.", "The Easy Saver pays 3.25% AER up to £85,000."),
    ("", "The fee is £5."),
    ("a", "a"),
    ("x y", "a b c d e"),
    ("Ünïcödé text — here, with «quotes».", "Unicode text here with quotes."),
    ("One. Two. Three four five six seven.", "One two three. Four five six seven eight."),
]


@pytest.mark.parametrize(
    "parameters",
    [{}, {"lowercase": True}, {"smooth_method": "floor"}, {"smooth_method": "add-k"}, {"smooth_method": "none"},
     {"tokenize": "char"}, {"tokenize": "intl"}],
)  # fmt: skip
def test_one_count_per_answer_gives_sacrebleus_own_scores_at_every_order(parameters: dict[str, object]) -> None:
    """BLEU-1..4 come from one set of n-gram counts per answer; each must equal sacrebleu scoring that order."""
    from sacrebleu.metrics import BLEU

    def expected(order: int, *, sentence: bool) -> BLEU:
        return BLEU(
            max_ngram_order=order,
            tokenize=str(parameters.get("tokenize", "13a")),
            lowercase=bool(parameters.get("lowercase", False)),
            smooth_method=str(parameters.get("smooth_method", "exp")),
            effective_order=sentence,
        )

    evaluator = build_evaluator("bleu", **parameters)
    cases = [CaseContext.build(actual_output=actual, expected_output=reference) for actual, reference in PAIRS]
    for case, (actual, reference) in zip(cases, PAIRS, strict=True):
        for order in (1, 2, 3, 4):
            score = expected(order, sentence=True).sentence_score(actual, [reference]).score
            assert evaluator.score(case)[f"bleu_{order}"] == round(min(max(score / 100, 0.0), 1.0), 6)
    corpus = evaluator.corpus_metrics(cases, [])[1]["corpus_bleu"]
    hypotheses, references = [actual for actual, _ in PAIRS], [[reference for _, reference in PAIRS]]
    for order in (1, 2, 3, 4):
        score = expected(order, sentence=False).corpus_score(hypotheses, references).score
        assert corpus[f"bleu_{order}"] == round(min(max(score / 100, 0.0), 1.0), 6)
