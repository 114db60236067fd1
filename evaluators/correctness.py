"""Correctness (Judge): does the response state what the expected response states (seeds 001/003)?"""

from dataclasses import dataclass, field

from assay.evaluators._databricks import COMPLIANCE, RatingJudge, rating_metric
from assay.evaluators.base import CaseContext
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec


@register
@dataclass
class Correctness(RatingJudge):
    spec = EvaluatorSpec(
        id="correctness",
        display_name="Correctness (Judge)",
        description=(
            "Asks the LLM judge whether the actual answer is factually accurate and says what the expected answer "
            "says: yes when it states the expected facts and contradicts none (small omissions that keep the "
            "intent are accepted), no otherwise. The expected answer should hold only the facts a correct "
            "answer needs."
        ),
        domain="generation",
        compliance=COMPLIANCE,
        required_inputs=["question", "expected_output", "actual_output"],
        needs=["llm"],
        metrics=[
            rating_metric(
                "correctness",
                "Correctness",
                "1 when the judge rates the answer correct against the expected answer (yes), 0 otherwise.",
                "response/llm_judged/correctness/rating/percentage",
            )
        ],
        keywords=["llm-judge", "ground-truth", "correctness", "databricks"],
        problem_type="accuracy",
    )
    golden = {
        "good": {
            "question": "What is the notice period for the Notice Saver account?",
            "expected_output": "The Notice Saver requires 95 days notice before a withdrawal.",
            "actual_output": "You need to give 95 days notice before you withdraw from the Notice Saver.",
        },
        "bad": {
            "question": "What is the notice period for the Notice Saver account?",
            "expected_output": "The Notice Saver requires 95 days notice before a withdrawal.",
            "actual_output": "There is no notice period; you can take your money out at any time.",
        },
    }
    template_id = "databricks_correctness"
    assessment = "correctness"
    cascade_proxy = "answer_semantic_similarity"
    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the primary metric's threshold (0.5)."}
    )

    def inputs(self, case: CaseContext) -> dict[str, str]:
        return {
            "request": case.question,
            "response": case.actual_output or "",
            "expected_response": case.expected_output,
        }
