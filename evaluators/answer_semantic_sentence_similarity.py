"""Answer semantic sentence similarity: how well each sentence of the answer is backed by the expected answer.

A whole-answer embedding blurs a wrong sentence into many right ones; matching sentence by sentence (seed 002)
lets the minimum expose the single sentence the expected answer does not support.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluators._sentence_similarity import embed_distinct, rounded, sentences_of, similarity_matrix
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta

SPLIT_INPUTS = ("actual_output", "expected_output")


@register
@dataclass
class AnswerSemanticSentenceSimilarity(Evaluator):
    spec = EvaluatorSpec(
        id="answer_semantic_sentence_similarity",
        display_name="Answer semantic sentence similarity",
        description=(
            "Semantic resemblance between the sentences of the actual answer and the expected answer (ground "
            "truth). Both answers are split into sentences and embedded; each actual sentence takes its best "
            "cosine similarity with any expected sentence, and the case reports the mean and the minimum of "
            "these best matches."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["expected_output", "actual_output"],
        needs=["embeddings"],
        metrics=[
            MetricMeta(
                key="mean_answer_similarity",
                display_name="Mean answer similarity",
                description=(
                    "Mean over the actual answer's sentences of their best cosine similarity with a sentence of "
                    "the expected answer."
                ),
                higher_is_better=True,
                threshold=0.75,
                is_primary=True,
            ),
            MetricMeta(
                key="min_answer_similarity",
                display_name="Min answer similarity",
                description=(
                    "Lowest best-match cosine similarity of any actual answer sentence with the expected answer's "
                    "sentences: the least supported sentence."
                ),
                higher_is_better=True,
                threshold=0.75,
            ),
        ],
        keywords=["embeddings", "ground-truth", "semantic-similarity", "sentences"],
    )

    golden = {
        "good": {
            "expected_output": (
                "The Easy Access Saver pays 3.25% AER on balances from £10,000. Interest is paid monthly."
            ),
            "actual_output": "Balances from £10,000 in the Easy Access Saver earn 3.25% AER. Interest is paid monthly.",
        },
        "bad": {
            "expected_output": (
                "The Easy Access Saver pays 3.25% AER on balances from £10,000. Interest is paid monthly."
            ),
            "actual_output": "Our branches open at 9am on Saturdays. Parking is free for customers.",
        },
    }

    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the default threshold of the primary metric."}
    )

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        cases = within_bound(cases, SPLIT_INPUTS)
        embed_distinct(
            self.services.embedder,
            (
                sentence
                for case in cases
                for text in (case.actual_output or "", case.expected_output)
                for sentence in sentences_of(text)
            ),
        )

    def score(self, case: CaseContext) -> dict[str, float | None]:
        check_bound(case, SPLIT_INPUTS)
        actual = sentences_of(case.actual_output or "")
        expected = sentences_of(case.expected_output)
        best_matches = similarity_matrix(self.services.embedder, actual, expected).max(axis=1)
        return {
            "mean_answer_similarity": rounded(best_matches.mean()),
            "min_answer_similarity": rounded(best_matches.min()),
        }
