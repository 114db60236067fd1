"""Answer semantic similarity: cosine of the actual and expected answers' embeddings (seed 002)."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluators.base import CaseContext, Evaluator, cosine
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta


@register
@dataclass
class AnswerSemanticSimilarity(Evaluator):
    spec = EvaluatorSpec(
        id="answer_semantic_similarity",
        display_name="Answer semantic similarity",
        description=(
            "Semantic resemblance between the actual answer and the expected answer (ground truth): "
            "both are embedded and compared by cosine similarity."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["expected_output", "actual_output"],
        needs=["embeddings"],
        metrics=[
            MetricMeta(
                key="answer_similarity",
                display_name="Answer similarity",
                description="Cosine similarity of the actual and expected answers' embeddings, clipped to [0, 1].",
                higher_is_better=True,
                threshold=0.75,
                is_primary=True,
            )
        ],
        keywords=["embeddings", "ground-truth", "semantic-similarity"],
    )

    golden = {
        "good": {
            "expected_output": "The Easy Access Saver pays 3.25% AER on balances from £10,000.",
            "actual_output": "Balances from £10,000 in the Easy Access Saver earn 3.25% AER.",
        },
        "bad": {
            "expected_output": "The Easy Access Saver pays 3.25% AER on balances from £10,000.",
            "actual_output": "Our branches open at 9am on Saturdays.",
        },
    }

    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the default threshold of the primary metric."}
    )

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        texts = [text for case in cases for text in (case.actual_output, case.expected_output) if text]
        if texts:
            self.services.embedder.embed(texts)

    def score(self, case: CaseContext) -> dict[str, float | None]:
        actual, expected = self.services.embedder.embed([case.actual_output or "", case.expected_output])
        return {"answer_similarity": round(cosine(actual, expected), 6)}
