"""Answer relevancy (Judge): does the answer address the question that was asked (seed 002)?

The judge reads only the answer and writes the questions it would answer; when the answer is relevant,
those questions resemble the one actually asked. The score is the mean embedding cosine of the original
question with the generated ones (clipped to [0, 1]), and 0 when the judge finds the answer noncommittal
(an evasive answer can echo the question's words without answering it).
"""

from dataclasses import dataclass, field
from typing import Any, ClassVar

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judge_spec
from assay.evaluators.base import CaseContext, Scored, golden_pair, score_metric
from assay.evaluators.registry import register

ANSWER_RELEVANCY_METRIC = score_metric(
    "answer_relevancy",
    "Answer relevancy",
    "Mean cosine similarity of the question with the questions the LLM judge generates from the actual "
    "answer (0 for a noncommittal answer); lower means an incomplete, off-topic or padded answer.",
    primary=True,
)


def answer_relevancy_golden(good_answer: str) -> dict[str, dict[str, Any]]:
    """The golden cases of answer relevancy, for the judge and its offline proxy (``cascade_proxy``) alike:
    ``good_answer`` to a question about the savings rate, and an off-topic answer."""
    return golden_pair(
        good_answer,
        "Our branches open at 9am on Saturdays. Parking is free for customers.",
        question="What interest rate does the Easy Access Saver pay?",
    )


@register
@dataclass
class AnswerRelevancyLLM(JudgedEvaluator):
    spec = judge_spec(
        "answer_relevancy_llm",
        "Answer Relevancy (Judge)",
        "How pertinent the actual answer is to the question: the LLM judge generates the questions the "
        "answer responds to, and the score is their mean embedding cosine with the original question; a "
        "noncommittal answer scores 0.",
        [ANSWER_RELEVANCY_METRIC],
        keywords=["relevancy", "question generation", "embeddings", "llm-judge", "ragas"],
        judged="actual_output",
        also_needs=["embeddings"],
    )
    golden = answer_relevancy_golden("The Easy Access Saver pays an interest rate of 3.25% AER.")
    cascade_proxy: ClassVar[str | None] = "answer_relevancy_sentence_similarity"

    questions: int = field(
        default=3, metadata={"description": "How many questions the judge generates from the answer (default 3)."}
    )

    def __post_init__(self) -> None:
        if not 1 <= self.questions <= 10:
            raise ValueError(f"answer_relevancy_llm: questions must be between 1 and 10, not {self.questions}")

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        part = await _ragas.answer_relevancy(case, ask, self.services.embedder, self.questions)
        return part.scored("answer_relevancy")
