"""ROUGE-1, ROUGE-2 and ROUGE-L F-measure of the actual answer against the expected one (seed 002, "ROUGE Evaluator").

Uses Google's ``rouge-score``, the implementation the seed cites. Its tokenizer keeps only ASCII letters and
digits, so a reference in another script tokenizes to nothing; such a case is unscored, because a zero there
would say "no overlap" when ROUGE simply cannot read the text.
"""

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from assay.evaluators._overlap import reference_answer_golden, reference_overlap_spec
from assay.evaluators.base import CaseContext, Evaluator, Unscored, score_metric
from assay.evaluators.registry import register

from assay.models.evaluation import MetricMeta

# Metric key -> rouge-score's name for it.
ROUGE_TYPES = {"rouge_1": "rouge1", "rouge_2": "rouge2", "rouge_l": "rougeL"}


def _rouge_metric(key: str, display_name: str, unit: str, primary: bool = False) -> MetricMeta:
    description = f"F-measure of the {unit} shared by the actual and the expected answers."
    return score_metric(key, display_name, description, primary=primary)


@lru_cache(maxsize=2)
def _scorer(use_stemmer: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES.values()), use_stemmer=use_stemmer)


@register
@dataclass
class Rouge(Evaluator):
    spec = reference_overlap_spec(
        "rouge",
        "ROUGE",
        "Overlap of the actual answer with the expected answer (ground truth), reported as the F-measure of "
        "ROUGE-1 (words), ROUGE-2 (word pairs) and ROUGE-L (longest common subsequence), computed with "
        "Google's rouge-score.",
        [
            _rouge_metric("rouge_1", "ROUGE-1", "words (1-grams)"),
            _rouge_metric("rouge_2", "ROUGE-2", "word pairs (2-grams)"),
            _rouge_metric("rouge_l", "ROUGE-L", "words in their longest common subsequence", primary=True),
        ],
        keywords=["rouge", "n-gram", "lcs", "ground-truth", "summarization"],
    )

    golden = reference_answer_golden("The Easy Access Saver pays 3.25% AER on all balances from £10,000.")

    use_stemmer: bool = field(
        default=False,
        metadata={
            "description": (
                'Reduce words longer than three letters to their Porter stem before matching ("paying" and '
                '"pays" both become "pay"); off by default, as in rouge-score.'
            )
        },
    )

    def score(self, case: CaseContext) -> dict[str, float | None]:
        from rouge_score import tokenize

        if not tokenize.tokenize(case.expected_output, None):
            raise Unscored(
                f"test case {case.test_case_key}: the expected answer has no ASCII letters or digits, "
                "the only tokens rouge-score compares"
            )
        result = _scorer(self.use_stemmer).score(case.expected_output, case.actual_output or "")
        return {key: round(result[name].fmeasure, 6) for key, name in ROUGE_TYPES.items()}
