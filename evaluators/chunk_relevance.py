"""Chunk relevance (Judge): did the retriever find chunks that help answer the request (seeds 001/003)?
Each retrieved chunk is rated on its own; the case's value is the precision, relevant / retrieved."""

from dataclasses import dataclass

from assay.evaluators._databricks import ChunkRatingJudge, rating_metric
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_contexts
from assay.evaluators.registry import register


@register
@dataclass
class ChunkRelevance(ChunkRatingJudge):
    spec = judge_spec(
        "chunk_relevance",
        "Chunk relevance precision (Judge)",
        "Asks the LLM judge, for each retrieved chunk on its own, whether it holds information that helps "
        "answer the request. The case's precision is the share of rated chunks judged relevant; a chunk the "
        "judge could not rate is listed with its error and left out of the share.",
        [
            rating_metric(
                "chunk_relevance_precision",
                "Chunk relevance precision",
                "Share of the retrieved chunks the judge rates relevant to the request.",
                "retrieval/llm_judged/chunk_relevance/precision/average",
            )
        ],
        keywords=["llm-judge", "rag", "retrieval", "precision", "databricks"],
        judged="retrieved_context",
        problem_type="relevance",
    )
    golden = golden_contexts(
        [
            "Current Account: arranged overdraft interest rate is 39.9% EAR variable.",
            "Overdraft interest on the Current Account is charged monthly at the arranged rate.",
        ],
        [
            "Our mobile app lets you freeze a lost card instantly.",
            "Branches are open from nine to five on weekdays.",
        ],
        question="What is the overdraft interest rate on the Current Account?",
    )
    template_id = "databricks_chunk_relevance"
    assessment = "chunk_relevance"

    def chunk_inputs(self, case: CaseContext, chunk: str) -> dict[str, str]:
        return {"request": case.question, "chunk": chunk}
