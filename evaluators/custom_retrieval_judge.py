"""Custom retrieval judge: a yes/no judge of each retrieved chunk from the user's own prompt (seed 001,
custom judges with ``assessment_type`` RETRIEVAL); the case's value is the share of chunks rated yes. In the
prompt ``retrieved_context`` is the one chunk being judged."""

from dataclasses import dataclass

from assay.evaluators._databricks import (
    ChunkRatingJudge,
    CustomPromptJudge,
    assessment_name_parameter,
    prompt_parameter,
    rating_metric,
)
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_contexts
from assay.evaluators.registry import register

DEFAULT_PROMPT = (
    "Does this retrieved passage hold information that helps answer the request?\n\n"
    "Request: {{ request }}\nPassage: {{ retrieved_context }}"
)


@register
@dataclass
class CustomRetrievalJudge(CustomPromptJudge, ChunkRatingJudge):
    spec = judge_spec(
        "custom_retrieval_judge",
        "Custom retrieval judge",
        "A yes/no LLM judge of each retrieved chunk written as a prompt: the assessment in your words, with "
        "{{ retrieved_context }} where the chunk goes and optionally {{ request }}, {{ response }} and "
        "{{ expected_response }}. The case's precision is the share of rated chunks judged yes. Reported "
        "under retrieval/llm_judged/<assessment_name>/...",
        [
            rating_metric(
                "precision",
                "Custom chunk precision",
                "Share of the retrieved chunks the judge rates yes against the custom prompt.",
                "retrieval/llm_judged/{assessment_name}/precision/average",
            )
        ],
        keywords=["llm-judge", "custom", "prompt", "retrieval", "databricks"],
        judged="retrieved_context",
    )
    golden = golden_contexts(
        ["CHAPS payment fee: £25 per payment, sent the same working day."],
        ["Our savings app rounds up card purchases into a pot."],
        question="What is the fee for a CHAPS payment?",
    )
    template_id = "databricks_custom_retrieval"
    needed_variable = "retrieved_context"
    assessment_name: str = assessment_name_parameter("chunk_helps_request", "retrieval")
    prompt: str = prompt_parameter(
        DEFAULT_PROMPT,
        "The assessment of one chunk, a yes/no question; refers to the chunk as {{ retrieved_context }} "
        "(required) and to the case as {{ request }}, {{ response }} or {{ expected_response }}.",
    )

    def chunk_inputs(self, case: CaseContext, chunk: str) -> dict[str, str]:
        return self.prompt_values(case, {"request": case.question, "retrieved_context": chunk})
