"""Chunk relevance (Judge): did the retriever find chunks that help answer the request (seeds 001/003)?
Each retrieved chunk is rated on its own; the case's value is the precision, relevant / retrieved."""

from dataclasses import dataclass, field

from assay.evaluators._databricks import ChunkRatingJudge
from assay.evaluators.base import CaseContext
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta


@register
@dataclass
class ChunkRelevance(ChunkRatingJudge):
    spec = EvaluatorSpec(
        id="chunk_relevance",
        display_name="Chunk relevance precision (Judge)",
        description=(
            "Asks the LLM judge, for each retrieved chunk on its own, whether it holds information that helps "
            "answer the request. The case's precision is the share of rated chunks judged relevant; a chunk the "
            "judge could not rate is listed with its error and left out of the share."
        ),
        domain="retrieval",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["question", "retrieved_context"],
        needs=["llm"],
        metrics=[
            MetricMeta(
                key="chunk_relevance_precision",
                display_name="Chunk relevance precision",
                description="Share of the retrieved chunks the judge rates relevant to the request.",
                higher_is_better=True,
                threshold=0.5,
                is_primary=True,
                aggregate_name="retrieval/llm_judged/chunk_relevance/precision/average",
            )
        ],
        keywords=["llm-judge", "rag", "retrieval", "precision", "databricks"],
        problem_type="relevance",
    )
    golden = {
        "good": {
            "question": "What is the overdraft interest rate on the Current Account?",
            "retrieved_context": [
                "Current Account: arranged overdraft interest rate is 39.9% EAR variable.",
                "Overdraft interest on the Current Account is charged monthly at the arranged rate.",
            ],
        },
        "bad": {
            "question": "What is the overdraft interest rate on the Current Account?",
            "retrieved_context": [
                "Our mobile app lets you freeze a lost card instantly.",
                "Branches are open from nine to five on weekdays.",
            ],
        },
    }
    template_id = "databricks_chunk_relevance"
    assessment = "chunk_relevance"
    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the primary metric's threshold (0.5)."}
    )

    def chunk_inputs(self, case: CaseContext, chunk: str) -> dict[str, str]:
        return {"request": case.question, "chunk": chunk}
