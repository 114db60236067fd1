"""Context sufficiency (Judge): did the retriever bring back everything the expected response needs
(seeds 001/003)? A no says the retrieval, not the generation, needs tuning for that request."""

from dataclasses import dataclass

from assay.evaluators._databricks import RatingJudge, numbered_context, rating_metric
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_contexts
from assay.evaluators.registry import register


@register
@dataclass
class ContextSufficiency(RatingJudge):
    spec = judge_spec(
        "context_sufficiency",
        "Context sufficiency (Judge)",
        "Asks the LLM judge whether the retrieved context holds every fact of the expected answer: yes when "
        "the expected answer could be written from it, no when information is missing (the rationale says "
        "what). Needs the expected answer.",
        [
            rating_metric(
                "context_sufficiency",
                "Context sufficiency",
                "1 when the judge rates the retrieved context sufficient for the expected answer (yes), 0 otherwise.",
                "retrieval/llm_judged/context_sufficiency/rating/percentage",
            )
        ],
        keywords=["llm-judge", "rag", "retrieval", "ground-truth", "databricks"],
        judged="retrieved_context",
        also_reads=["expected_output"],
        problem_type="relevance",
    )
    golden = golden_contexts(
        ["Fixed Rate Bond: open it with a minimum deposit of £1,000 for a 2 year term."],
        ["Easy Access Saver: withdraw at any time without a penalty."],
        question="What is the minimum deposit for the Fixed Rate Bond?",
        expected_output="The Fixed Rate Bond needs a minimum deposit of £1,000.",
    )
    template_id = "databricks_context_sufficiency"
    assessment = "context_sufficiency"
    scope = "retrieval"

    def inputs(self, case: CaseContext) -> dict[str, str]:
        return {
            "request": case.question,
            "expected_response": case.expected_output,
            "retrieved_context": numbered_context(case),
        }
