"""Answer semantic sentence similarity: how well each sentence of the answer is backed by the expected answer.

A whole-answer embedding blurs a wrong sentence into many right ones; matching sentence by sentence (seed 002)
lets the minimum expose the single sentence the expected answer does not support.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from assay.evaluators._sentence_similarity import SentenceSimilarityEvaluator, sentences_of, similarity_spec
from assay.evaluators.base import CaseContext, golden_pair, score_metric
from assay.evaluators.registry import register


@register
@dataclass
class AnswerSemanticSentenceSimilarity(SentenceSimilarityEvaluator):
    spec = similarity_spec(
        "answer_semantic_sentence_similarity",
        "Answer semantic sentence similarity",
        "Semantic resemblance between the sentences of the actual answer and the expected answer (ground "
        "truth). Both answers are split into sentences and embedded; each actual sentence takes its best "
        "cosine similarity with any expected sentence, and the case reports the mean and the minimum of "
        "these best matches.",
        [
            score_metric(
                "mean_answer_similarity",
                "Mean answer similarity",
                "Mean over the actual answer's sentences of their best cosine similarity with a sentence of "
                "the expected answer.",
                primary=True,
            ),
            score_metric(
                "min_answer_similarity",
                "Min answer similarity",
                "Lowest best-match cosine similarity of any actual answer sentence with the expected answer's "
                "sentences: the least supported sentence.",
            ),
        ],
        keywords=["embeddings", "ground-truth", "semantic-similarity", "sentences"],
        required_inputs=["expected_output", "actual_output"],
    )

    golden = golden_pair(
        "Balances from £10,000 in the Easy Access Saver earn 3.25% AER. Interest is paid monthly.",
        "Our branches open at 9am on Saturdays. Parking is free for customers.",
        expected_output="The Easy Access Saver pays 3.25% AER on balances from £10,000. Interest is paid monthly.",
    )

    split_inputs = ("actual_output", "expected_output")

    @staticmethod
    def texts(case: CaseContext) -> Iterable[str]:
        return [s for text in (case.actual_output or "", case.expected_output) for s in sentences_of(text)]

    def similarities(self, case: CaseContext) -> dict[str, float]:
        actual = sentences_of(case.actual_output or "")
        expected = sentences_of(case.expected_output)
        best_matches = self.cosines(actual, expected).max(axis=1)
        return {
            "mean_answer_similarity": best_matches.mean(),
            "min_answer_similarity": best_matches.min(),
        }
