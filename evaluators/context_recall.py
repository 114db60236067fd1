"""Context recall (Judge): did retrieval find everything the expected answer states (seed 002)?

The judge splits the expected answer into statements and attributes each to the retrieved context or not;
the score is attributed statements / statements. It measures the retriever, not the generator: the actual
answer is not read.
"""

from dataclasses import dataclass

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judged_spec
from assay.evaluators.base import CaseContext, Scored, golden_contexts, score_metric
from assay.evaluators.registry import register

CONTEXT_RECALL_METRIC = score_metric(
    "context_recall",
    "Context recall",
    "Share of the expected answer's statements that can be attributed to the retrieved context (attributed "
    "statements / statements); below the threshold retrieval missed information the answer needs.",
    primary=True,
)


@register
@dataclass
class ContextRecall(JudgedEvaluator):
    spec = judged_spec(
        "context_recall",
        "Context Recall (Judge)",
        "The alignment of the retrieved context with the expected answer: the LLM judge checks whether each "
        "statement of the expected answer can be attributed to the context; the score is the attributed "
        "share.",
        [CONTEXT_RECALL_METRIC],
        keywords=["rag", "retrieval", "recall", "ground truth", "llm-judge", "ragas"],
        domain="retrieval",
        model_types=["rag"],
        required_inputs=["expected_output", "retrieved_context"],
    )
    golden = golden_contexts(
        ["Easy Access Saver terms: interest is calculated daily and paid monthly into the account."],
        ["Branch opening hours: 9am to 5pm on weekdays. Parking is free for customers."],
        question="How is interest paid on the Easy Access Saver?",
        expected_output="Interest is calculated daily. Interest is paid monthly into the account.",
    )


    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        part = await _ragas.context_recall(case, ask)
        return part.scored("context_recall")
