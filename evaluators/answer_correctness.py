"""Answer correctness (Judge): how closely the actual answer matches the expected answer, as a weighted mean of
a factual F1 and a semantic similarity (seed 002).

The judge splits both answers into statements and marks which are shared: TP (in both), FP (only in the
actual answer), FN (only in the expected answer); F1 = TP / (TP + (FP + FN) / 2). The semantic part is the
embedding cosine of the two answers. The defaults weigh facts 0.75 and wording 0.25: a fluent answer with a
wrong figure must not pass on similarity alone.
"""

from dataclasses import dataclass, field
from typing import ClassVar

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judged_spec
from assay.evaluators.base import CaseContext, Scored, golden_pair, score_metric
from assay.evaluators.registry import register

from assay.models.evaluation import MetricMeta


@register
@dataclass
class AnswerCorrectness(JudgedEvaluator):
    spec = judged_spec(
        "answer_correctness",
        "Answer Correctness (Judge)",
        "Accuracy of the actual answer against the expected answer: a weighted mean of factuality (F1 of "
        "the statements the LLM judge finds in both answers, in the actual answer only and in the expected "
        "answer only) and semantic similarity (embedding cosine of the two answers); default weights 0.75 "
        "and 0.25.",
        [
            score_metric(
                "answer_correctness",
                "Answer correctness",
                "Weighted mean of the factual F1 and the semantic similarity of the actual and expected "
                "answers; higher means closer alignment with the ground truth.",
                primary=True,
            ),
            MetricMeta(
                key="factual_f1",
                display_name="Factual F1",
                description="F1 of the statements: TP / (TP + 0.5 x (FP + FN)), as classified by the judge.",
                higher_is_better=True,
            ),
            MetricMeta(
                key="semantic_similarity",
                display_name="Semantic similarity",
                description="Cosine similarity of the actual and expected answers' embeddings, clipped to [0, 1].",
                higher_is_better=True,
            ),
        ],
        keywords=["correctness", "ground truth", "f1", "embeddings", "llm-judge", "ragas"],
        domain="generation",
        required_inputs=["expected_output", "actual_output"],
        also_needs=["embeddings"],
    )
    golden = golden_pair(
        "On balances from £10,000 to £49,999 the Easy Access Saver pays 3.25% AER.",
        "You can open a Fixed Rate Bond online. Branches close at 5pm on weekdays.",
        question="What rate does the Easy Access Saver pay on £20,000?",
        expected_output="The Easy Access Saver pays 3.25% AER on balances from £10,000 to £49,999.",
    )
    cascade_proxy: ClassVar[str | None] = "answer_semantic_similarity"

    factuality_weight: float = field(
        default=0.75, metadata={"description": "Weight of the factual F1 in the score (default 0.75)."}
    )
    semantic_weight: float = field(
        default=0.25, metadata={"description": "Weight of the semantic similarity in the score (default 0.25)."}
    )

    def __post_init__(self) -> None:
        if self.factuality_weight < 0 or self.semantic_weight < 0 or self.factuality_weight + self.semantic_weight <= 0:
            raise ValueError(
                "answer_correctness: factuality_weight and semantic_weight must be non-negative and not both zero"
            )

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        part = await _ragas.answer_correctness(
            case, ask, self.services.embedder, self.factuality_weight, self.semantic_weight
        )
        return part.scored("answer_correctness")
