"""Answer semantic similarity: cosine of the actual and expected answers' embeddings (seed 002)."""

from collections.abc import Sequence
from dataclasses import dataclass

from assay.evaluators._overlap import reference_answer_golden
from assay.evaluators._sentence_similarity import similarity_spec
from assay.evaluators.base import CaseContext, Evaluator, cosine, score_metric
from assay.evaluators.registry import register


@register
@dataclass
class AnswerSemanticSimilarity(Evaluator):
    spec = similarity_spec(
        "answer_semantic_similarity",
        "Answer semantic similarity",
        "Semantic resemblance between the actual answer and the expected answer (ground truth): "
        "both are embedded and compared by cosine similarity.",
        [
            score_metric(
                "answer_similarity",
                "Answer similarity",
                "Cosine similarity of the actual and expected answers' embeddings, clipped to [0, 1].",
                primary=True,
            )
        ],
        keywords=["embeddings", "ground-truth", "semantic-similarity"],
        required_inputs=["expected_output", "actual_output"],
    )

    golden = reference_answer_golden("Balances from £10,000 in the Easy Access Saver earn 3.25% AER.")


    def prepare(self, cases: Sequence[CaseContext]) -> None:
        texts = [text for case in cases for text in (case.actual_output, case.expected_output) if text]
        if texts:
            self.services.embedder.embed(texts)

    def score(self, case: CaseContext) -> dict[str, float | None]:
        actual, expected = self.services.embedder.embed([case.actual_output or "", case.expected_output])
        return {"answer_similarity": round(cosine(actual, expected), 6)}
