"""Groundedness (Judge): is the response supported by the retrieved context (seeds 001/003)?

The seeds call it ``groundedness``; that id is Assay's offline, embedding-based evaluator, which serves as
this judge's cascade proxy."""

from dataclasses import dataclass

from assay.evaluators._databricks import COMPLIANCE, RatingJudge, numbered_context, rating_metric
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_pair
from assay.evaluators.registry import register


@register
@dataclass
class GroundednessJudge(RatingJudge):
    spec = judge_spec(
        "groundedness_judge",
        "Groundedness (Judge)",
        "Asks the LLM judge whether the retrieved context supports all, or almost all, of the actual "
        "answer: no when the answer states a fact, figure or condition the context does not (hallucination).",
        [
            rating_metric(
                "groundedness",
                "Groundedness",
                "1 when the judge rates the answer grounded in the retrieved context (yes), 0 otherwise.",
                "response/llm_judged/groundedness/rating/percentage",
            )
        ],
        keywords=["llm-judge", "rag", "hallucination", "groundedness", "databricks"],
        judged="actual_output",
        also_reads=["retrieved_context"],
        compliance=[*COMPLIANCE, "NIST: Safe"],
        model_types=["rag"],
        problem_type="hallucination",
    )
    golden = golden_pair(
        "The Easy Access Saver pays 3.25% AER on balances from £10,000 to £49,999.",
        "The Easy Access Saver pays 4.10% AER and includes free travel insurance.",
        question="What rate does the Easy Access Saver pay?",
        retrieved_context=["Easy Access Saver: pays 3.25% AER on balances from £10,000 to £49,999."],
    )
    template_id = "databricks_groundedness"
    assessment = "groundedness"
    cascade_proxy = "groundedness"

    def inputs(self, case: CaseContext) -> dict[str, str]:
        return {
            "request": case.question,
            "response": case.actual_output or "",
            "retrieved_context": numbered_context(case),
        }
