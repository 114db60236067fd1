"""Correctness (Judge): does the response state what the expected response states (seeds 001/003)?"""

from dataclasses import dataclass

from assay.evaluators._databricks import RatingJudge, rating_metric
from assay.evaluators._judged import judge_spec
from assay.evaluators.base import CaseContext, golden_pair
from assay.evaluators.registry import register


@register
@dataclass
class Correctness(RatingJudge):
    spec = judge_spec(
        "correctness",
        "Correctness (Judge)",
        "Asks the LLM judge whether the actual answer is factually accurate and says what the expected answer "
        "says: yes when it states the expected facts and contradicts none (small omissions that keep the "
        "intent are accepted), no otherwise. The expected answer should hold only the facts a correct "
        "answer needs.",
        [
            rating_metric(
                "correctness",
                "Correctness",
                "1 when the judge rates the answer correct against the expected answer (yes), 0 otherwise.",
                "response/llm_judged/correctness/rating/percentage",
            )
        ],
        keywords=["llm-judge", "ground-truth", "correctness", "databricks"],
        judged="actual_output",
        also_reads=["expected_output"],
        problem_type="accuracy",
    )
    golden = golden_pair(
        "You need to give 95 days notice before you withdraw from the Notice Saver.",
        "There is no notice period; you can take your money out at any time.",
        question="What is the notice period for the Notice Saver account?",
        expected_output="The Notice Saver requires 95 days notice before a withdrawal.",
    )
    template_id = "databricks_correctness"
    assessment = "correctness"
    cascade_proxy = "answer_semantic_similarity"

    def inputs(self, case: CaseContext) -> dict[str, str]:
        return {
            "request": case.question,
            "response": case.actual_output or "",
            "expected_response": case.expected_output,
        }
