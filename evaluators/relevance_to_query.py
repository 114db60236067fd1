"""Relevance to query (Judge): does the response address the request (seeds 001/003)?"""

from dataclasses import dataclass

from assay.evaluators._databricks import RatingJudge, rating_metric
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_pair
from assay.evaluators.registry import register


@register
@dataclass
class RelevanceToQuery(RatingJudge):
    spec = judge_spec(
        "relevance_to_query",
        "Relevance to query (Judge)",
        "Asks the LLM judge whether the actual answer addresses the user's request: yes when it deals with "
        "what was asked, no when it answers something else or changes the subject. Truth is not judged here.",
        [
            rating_metric(
                "relevance_to_query",
                "Relevance to query",
                "1 when the judge rates the answer relevant to the request (yes), 0 otherwise.",
                "response/llm_judged/relevance_to_query/rating/percentage",
            )
        ],
        keywords=["llm-judge", "relevance", "databricks"],
        judged="actual_output",
        problem_type="relevance",
    )
    golden = golden_pair(
        "To reset your online banking password, choose 'Forgot password' on the login page.",
        "Our branches open at nine on weekdays and we sell travel insurance.",
        question="How do I reset my online banking password?",
    )
    template_id = "databricks_relevance_to_query"
    assessment = "relevance_to_query"
    cascade_proxy = "answer_relevancy_sentence_similarity"

    def inputs(self, case: CaseContext) -> dict[str, str]:
        return {"request": case.question, "response": case.actual_output or ""}
