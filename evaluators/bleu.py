"""BLEU-1..BLEU-4 of the actual answer against the expected answer, with sacrebleu (seed 002, "BLEU Evaluator").

The seed's BLEU-n is NLTK's cumulative BLEU: the geometric mean of the 1..n-gram precisions times the brevity
penalty. sacrebleu computes the same quantity with a standard, versioned tokenizer and reports 0-100; we scale
it to the seed's 0-1 range. Sentence BLEU needs smoothing (one missing 4-gram would zero a whole answer) and
an effective order (a three-word perfect answer is a perfect match, not a zero), so both are on by default.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from assay.evaluators._overlap import reference_answer_golden, reference_overlap_spec
from assay.evaluators.base import CaseContext, Evaluator, Unscored, score_metric
from assay.evaluators.registry import register

from assay.models.evaluation import CaseScores, MetricMeta

ORDERS = (1, 2, 3, 4)
# Tokenizers that need no extra package or download (spm/flores fetch a model, mecab needs a dictionary).
OFFLINE_TOKENIZERS = ("13a", "intl", "zh", "char", "none")
SMOOTH_METHODS = ("exp", "floor", "add-k", "none")


def _bleu_metric(order: int) -> MetricMeta:
    grams = {1: "unigrams", 2: "bigrams", 3: "trigrams", 4: "4-grams"}[order]
    return score_metric(
        f"bleu_{order}",
        f"BLEU-{order}",
        f"Cumulative BLEU up to {grams}: geometric mean of the 1..{order}-gram precisions of the actual "
        "answer against the expected answer, times the brevity penalty, scaled to [0, 1].",
        primary=order == 1,
    )


@lru_cache(maxsize=32)
def _scorer(order: int, tokenize: str, lowercase: bool, smooth_method: str, effective_order: bool) -> Any:
    """One sacrebleu BLEU object per configuration; building one compiles its tokenizer."""
    from sacrebleu.metrics import BLEU

    return BLEU(
        max_ngram_order=order,
        tokenize=tokenize,
        lowercase=lowercase,
        smooth_method=smooth_method,
        effective_order=effective_order,
    )


def _unit(score: float) -> float:
    """sacrebleu's 0-100 score as the seed's 0-1 value (100.00000000000004 is a perfect 1.0)."""
    return round(min(max(score / 100.0, 0.0), 1.0), 6)


@register
@dataclass
class Bleu(Evaluator):
    spec = reference_overlap_spec(
        "bleu",
        "BLEU",
        "n-gram overlap of the actual answer with the expected answer (ground truth): BLEU-1 to BLEU-4, "
        "each the cumulative sentence BLEU up to that n-gram order computed with sacrebleu and scaled to "
        "[0, 1]. Run-level details add the corpus BLEU of each model's answers.",
        [_bleu_metric(order) for order in ORDERS],
        keywords=["bleu", "n-gram", "ground-truth", "summarization", "translation"],
    )

    golden = reference_answer_golden("The Easy Access Saver pays 3.25% AER on balances from £10,000.")

    tokenize: str = field(
        default="13a",
        metadata={
            "description": (
                "sacrebleu tokenizer: 13a (default, mteval-v13a), intl (Unicode punctuation), zh (Chinese), "
                "char (character level, for scripts without spaces) or none."
            )
        },
    )
    lowercase: bool = field(default=False, metadata={"description": "Compare case-insensitively."})
    smooth_method: str = field(
        default="exp",
        metadata={
            "description": (
                "Smoothing of zero n-gram counts in sentence BLEU: exp (default), floor, add-k or none "
                "(none reproduces unsmoothed NLTK, where one missing n-gram order gives 0)."
            )
        },
    )

    def __post_init__(self) -> None:
        if self.tokenize not in OFFLINE_TOKENIZERS:
            raise ValueError(f"bleu: tokenize must be one of {OFFLINE_TOKENIZERS}, got {self.tokenize!r}")
        if self.smooth_method not in SMOOTH_METHODS:
            raise ValueError(f"bleu: smooth_method must be one of {SMOOTH_METHODS}, got {self.smooth_method!r}")

    def _bleu(self, order: int, *, sentence: bool) -> Any:
        return _scorer(order, self.tokenize, self.lowercase, self.smooth_method, sentence)

    def _statistics(self, hypotheses: Sequence[str], references: Sequence[str]) -> list[list[int]]:
        """sacrebleu's match statistics up to 4-grams, one row per pair: [hyp_len, ref_len, correct x4, total x4].

        Every BLEU-n is computed from the 1..n slices of one row, so each text is tokenized and counted once
        instead of once per order (four times the work, most of the evaluator's time)."""
        return self._bleu(max(ORDERS), sentence=True)._extract_corpus_statistics(hypotheses, [references])

    def _from_statistics(self, row: Sequence[int], order: int, *, sentence: bool) -> float:
        top = max(ORDERS)
        scorer = self._bleu(order, sentence=sentence)
        return _unit(
            scorer.compute_bleu(
                correct=list(row[2 : 2 + order]),
                total=list(row[2 + top : 2 + top + order]),
                sys_len=int(row[0]),
                ref_len=int(row[1]),
                smooth_method=scorer.smooth_method,
                smooth_value=scorer.smooth_value,
                effective_order=sentence,
                max_ngram_order=order,
            ).score
        )

    def score(self, case: CaseContext) -> dict[str, float | None]:
        hypothesis, reference = case.actual_output or "", case.expected_output
        if not self._bleu(1, sentence=True).tokenizer(reference.strip()):
            raise Unscored(
                f"test case {case.test_case_key}: the expected answer has no tokens for the {self.tokenize!r} tokenizer"
            )
        (row,) = self._statistics([hypothesis], [reference])
        return {f"bleu_{order}": self._from_statistics(row, order, sentence=True) for order in ORDERS}

    def corpus_metrics(
        self, cases: Sequence[CaseContext], scores: Sequence[CaseScores]
    ) -> tuple[dict[str, float | None], dict[str, Any]]:
        """The seed reports the mean of sentence BLEU; corpus BLEU (n-gram counts pooled over all answers,
        as machine translation reports it) is added as a detail, not as a replacement of that mean."""
        rows = self._statistics([case.actual_output or "" for case in cases], [case.expected_output for case in cases])
        pooled = [sum(column) for column in zip(*rows, strict=True)] if rows else [0] * (2 + 2 * max(ORDERS))
        corpus = {f"bleu_{order}": self._from_statistics(pooled, order, sentence=False) for order in ORDERS}
        return {}, {"corpus_bleu": corpus}
