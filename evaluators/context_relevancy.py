"""Context relevancy (Judge): how much of the retrieved context is needed for the question (seed 002)?

The retrieved chunks are split into sentences here (the sentence tokenizer sets the total, not the judge);
the judge names, by number, the sentences needed to answer the question; the score is relevant sentences /
all sentences. Padding the context with off-topic text lowers it even when the answer is in there.
"""

from dataclasses import dataclass
from typing import ClassVar

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judge_spec
from assay.evaluators.base import CaseContext, Scored, golden_contexts, score_metric
from assay.evaluators.registry import register


@register
@dataclass
class ContextRelevancy(JudgedEvaluator):
    spec = judge_spec(
        "context_relevancy",
        "Context Relevancy (Judge)",
        "The relevancy of the retrieved context to the question: the context is split into sentences, the "
        "LLM judge picks those needed to answer the question, and the score is their share of all sentences.",
        [
            score_metric(
                "context_relevancy",
                "Context relevancy",
                "Share of the retrieved context's sentences that are relevant for answering the question "
                "(relevant sentences / all sentences); ideally the context holds only what the question needs.",
                primary=True,
            )
        ],
        keywords=["rag", "retrieval", "relevancy", "sentences", "llm-judge", "ragas"],
        judged="retrieved_context",
    )
    golden = golden_contexts(
        [
            "The Easy Access Saver pays an interest rate of 3.25% AER.",
            "The Easy Access Saver interest rate is variable and paid monthly.",
        ],
        [
            "Branch opening hours are 9am to 5pm on weekdays. Parking is free for customers.",
            "The Easy Access Saver pays an interest rate of 3.25% AER. Mortgage overpayments are free.",
        ],
        question="What interest rate does the Easy Access Saver pay?",
    )
    cascade_proxy: ClassVar[str | None] = "context_relevancy_soft"


    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        part = await _ragas.context_relevancy(case, ask)
        return part.scored("context_relevancy")
