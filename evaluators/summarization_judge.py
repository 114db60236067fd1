"""Summarization (Judge): the LLM judge compares the actual answer (a summary) with the expected answer (the
reference summary) and says whether it is a good summary (seed 002).

The manual gives it a binary judge's five metrics. Its retrieval-failures metric has nothing to judge here
(a retrieved chunk is source material, not a summary), so it stays unscored (None) rather than invented.
"""

from dataclasses import dataclass
from typing import Any

from assay.evaluators._binary_judge import BinaryJudgeEvaluator, binary_judge_spec
from assay.evaluators.base import CaseContext, golden_pair
from assay.evaluators.registry import register


@register
@dataclass
class SummarizationJudge(BinaryJudgeEvaluator):
    spec = binary_judge_spec(
        "summarization_judge",
        "Summarization (Judge)",
        "Asks the LLM judge whether the actual answer is a good summary compared with the expected answer "
        "(the reference summary): it must convey the reference's key points, contradict none and invent "
        "nothing. One boolean per case; models are compared on the share of good summaries. The judge's "
        "missing points and unsupported statements are kept as evidence.",
        (
            "Good summary (pass)",
            "Bad summary (fail)",
            "Summarization retrieval failures",
            "Summarization generation failures",
            "Summarization parsing failures",
        ),
        "the summarization quality check",
        keywords=["summarization", "summary", "reference summary", "llm-judge"],
        domain="summarization",
        tasks=["summarization"],
        required_inputs=["expected_output", "actual_output"],
    )
    golden = golden_pair(
        "The savings rate rises to 3.25% from 1 May and existing customers switch automatically.",
        "The bank is closing its branches on Sundays.",
        categories=["summarization"],
        expected_output="From 1 May the savings rate rises to 3.25%; existing customers switch automatically.",
    )
    template_id = "summarization_judge"
    failure_field = "bad_summary"
    judge_context = False

    def inputs(self, case: CaseContext, text: str) -> dict[str, Any]:
        return {"reference": case.expected_output, "summary": text}
