"""Context precision (Judge): are the chunks that lead to the expected answer ranked at the top (seed 002)?

The judge decides for each retrieved chunk, on its own, whether it was useful for arriving at the expected
answer; the score is the average precision of that ranking: the mean of precision@k over the ranks k holding
a useful chunk. Useless chunks above useful ones lower it; a retrieval with no useful chunk scores 0.
"""

from dataclasses import dataclass

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judge_spec
from assay.evaluators.base import CaseContext, Scored, golden_contexts, score_metric
from assay.evaluators.registry import register

CONTEXT_PRECISION_METRIC = score_metric(
    "context_precision",
    "Context precision",
    "Average precision of the retrieved chunks, a chunk being relevant when the LLM judge finds it useful for "
    "reaching the expected answer: whether the relevant chunks are ranked above the irrelevant ones.",
    primary=True,
)


@register
@dataclass
class ContextPrecision(JudgedEvaluator):
    spec = judge_spec(
        "context_precision",
        "Context Precision (Judge)",
        "The precision of context retrieval: the LLM judge marks each retrieved chunk as useful or not for "
        "reaching the expected answer, and the score is the average precision over the chunks' ranking, so "
        "relevant chunks should appear at the top.",
        [CONTEXT_PRECISION_METRIC],
        keywords=["rag", "retrieval", "precision", "ranking", "llm-judge", "ragas"],
        judged="retrieved_context",
        also_reads=["expected_output"],
    )
    golden = golden_contexts(
        [
            "Easy Access Saver: balances from £10,000 to £49,999 pay 3.25% AER.",
            "Branch opening hours: 9am to 5pm on weekdays.",
        ],
        [
            "Branch opening hours: 9am to 5pm on weekdays.",
            "Mortgage overpayments of up to 10% a year are free of charge.",
            "Easy Access Saver: balances from £10,000 to £49,999 pay 3.25% AER.",
        ],
        question="What rate does the Easy Access Saver pay on £20,000?",
        expected_output="The Easy Access Saver pays 3.25% AER on balances from £10,000 to £49,999.",
    )


    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        part = await _ragas.context_precision(case, ask)
        return part.scored("context_precision")
