"""Custom answer judge: a yes/no judge of the response from the user's own prompt (seed 001, custom judges
with ``assessment_type`` ANSWER). The prompt refers to ``request``, ``response``, ``expected_response`` and
``retrieved_context``; it becomes a judge template when the evaluator is built, so a bad prompt fails there,
naming the parameter, not halfway through a run."""

from dataclasses import dataclass, field

from assay.judges.templates import JudgeTemplate
from assay.models.evaluation import EvaluatorSpec
from evaluators._databricks import COMPLIANCE, RatingJudge, custom_template, numbered_context, rating_metric
from evaluators.base import CaseContext, Unscored
from evaluators.registry import register

VARIABLES = ("request", "response", "expected_response", "retrieved_context")
DEFAULT_PROMPT = (
    "Does the response give the user what the request asks for, staying on its subject?\n\n"
    "Request: {{ request }}\nResponse: {{ response }}"
)


@register
@dataclass
class CustomAnswerJudge(RatingJudge):
    spec = EvaluatorSpec(
        id="custom_answer_judge",
        display_name="Custom answer judge",
        description=(
            "A yes/no LLM judge of the actual answer written as a prompt: the assessment in your words, with "
            "{{ request }}, {{ response }}, {{ expected_response }} and {{ retrieved_context }} where the case's "
            "question, answer, expected answer and retrieved context go. Reported under "
            "response/llm_judged/<assessment_name>/..."
        ),
        domain="generation",
        compliance=COMPLIANCE,
        required_inputs=["question", "actual_output"],
        needs=["llm"],
        metrics=[
            rating_metric(
                "rating",
                "Custom rating",
                "1 when the judge rates the answer yes against the custom prompt, 0 otherwise.",
                "response/llm_judged/{assessment_name}/rating/percentage",
            )
        ],
        keywords=["llm-judge", "custom", "prompt", "databricks"],
    )
    golden = {
        "good": {
            "question": "How long does a bank transfer to another UK bank take?",
            "actual_output": "A bank transfer to another UK bank usually arrives within two hours.",
        },
        "bad": {
            "question": "How long does a bank transfer to another UK bank take?",
            "actual_output": "We have launched a new rewards credit card with cashback on groceries.",
        },
    }
    template_id = "databricks_custom_answer"
    assessment_name: str = field(
        default="answers_request",
        metadata={"description": "Name of the assessment in the columns: response/llm_judged/<assessment_name>/..."},
    )
    prompt: str = field(
        default=DEFAULT_PROMPT,
        metadata={
            "description": "The assessment, a yes/no question; refers to the case as {{ request }}, {{ response }}, "
            "{{ expected_response }} or {{ retrieved_context }} and must use {{ response }}."
        },
    )
    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the primary metric's threshold (0.5)."}
    )

    def __post_init__(self) -> None:
        self._template = custom_template(
            template_id=self.template_id,
            evaluator_id=self.spec.id,
            assessment_name=self.assessment_name,
            prompt=self.prompt,
            allowed=VARIABLES,
            needed="response",
        )

    def template(self) -> JudgeTemplate:
        return self._template

    def column_name(self) -> str:
        return self.assessment_name

    def inputs(self, case: CaseContext) -> dict[str, str]:
        values = {"request": case.question, "response": case.actual_output or ""}
        if "expected_response" in self._template.inputs:
            if not case.expected_output.strip():
                raise Unscored("missing input: expected_output (the prompt uses {{ expected_response }})")
            values["expected_response"] = case.expected_output
        if "retrieved_context" in self._template.inputs:
            if not case.retrieved_context:
                raise Unscored("missing input: retrieved_context (the prompt uses {{ retrieved_context }})")
            values["retrieved_context"] = numbered_context(case)
        return {name: value for name, value in values.items() if name in self._template.inputs}
