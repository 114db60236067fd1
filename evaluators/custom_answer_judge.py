"""Custom answer judge: a yes/no judge of the response from the user's own prompt (seed 001, custom judges
with ``assessment_type`` ANSWER). The prompt refers to ``request``, ``response``, ``expected_response`` and
``retrieved_context``; it becomes a judge template when the evaluator is built, so a bad prompt fails there,
naming the parameter, not halfway through a run."""

from dataclasses import dataclass

from assay.evaluators._databricks import (
    CustomPromptJudge,
    RatingJudge,
    assessment_name_parameter,
    prompt_parameter,
    rating_metric,
)
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_pair
from assay.evaluators.registry import register

DEFAULT_PROMPT = (
    "Does the response give the user what the request asks for, staying on its subject?\n\n"
    "Request: {{ request }}\nResponse: {{ response }}"
)


@register
@dataclass
class CustomAnswerJudge(CustomPromptJudge, RatingJudge):
    spec = judge_spec(
        "custom_answer_judge",
        "Custom answer judge",
        "A yes/no LLM judge of the actual answer written as a prompt: the assessment in your words, with "
        "{{ request }}, {{ response }}, {{ expected_response }} and {{ retrieved_context }} where the case's "
        "question, answer, expected answer and retrieved context go. Reported under "
        "response/llm_judged/<assessment_name>/...",
        [
            rating_metric(
                "rating",
                "Custom rating",
                "1 when the judge rates the answer yes against the custom prompt, 0 otherwise.",
                "response/llm_judged/{assessment_name}/rating/percentage",
            )
        ],
        keywords=["llm-judge", "custom", "prompt", "databricks"],
        judged="actual_output",
    )
    golden = golden_pair(
        "A bank transfer to another UK bank usually arrives within two hours.",
        "We have launched a new rewards credit card with cashback on groceries.",
        question="How long does a bank transfer to another UK bank take?",
    )
    template_id = "databricks_custom_answer"
    needed_variable = "response"
    assessment_name: str = assessment_name_parameter("answers_request", "response")
    prompt: str = prompt_parameter(
        DEFAULT_PROMPT,
        "The assessment, a yes/no question; refers to the case as {{ request }}, {{ response }}, "
        "{{ expected_response }} or {{ retrieved_context }} and must use {{ response }}.",
    )

    def inputs(self, case: CaseContext) -> dict[str, str]:
        return self.prompt_values(case, {"request": case.question, "response": case.actual_output or ""})
