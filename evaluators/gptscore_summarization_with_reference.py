"""Summarization with reference (GPTScore): how likely the judge model finds the summary as a rewrite of the
reference summary, and the reverse, under six instructions (seed 002)."""

from dataclasses import dataclass, field

from assay.evaluators._gptscore import (
    THRESHOLD_PARAMETER,
    Aspect,
    GPTScoreEvaluator,
    Prompt,
    both_ways,
    gptscore_metrics,
)
from assay.evaluators.base import CaseContext
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

ASPECTS = (
    Aspect(
        "semantic_coverage",
        "Semantic Coverage",
        "How many semantic content units from the reference text are covered by the generated text?",
    ),
    Aspect("factuality", "Factuality", "Does the generated text preserve the factual statements of the source text?"),
    Aspect(
        "informativeness",
        "Informativeness",
        "How well does the generated text capture the key ideas of its source text?",
    ),
    Aspect("coherence", "Coherence", "How much does the generated text make sense?"),
    Aspect("relevance", "Relevance", "How well is the generated text relevant to its source text?"),
    Aspect("fluency", "Fluency", "Is the generated text well-written and grammatical?"),
)


@register
@dataclass
class GPTScoreSummarizationWithReference(GPTScoreEvaluator):
    spec = EvaluatorSpec(
        id="gptscore_summarization_with_reference",
        display_name="Summarization with reference (GPTScore)",
        description=(
            "GPTScore for summaries with a reference: the average negative log-likelihood the judge model gives "
            "the actual answer as a rewrite of the expected answer (and the reverse, averaged) under six "
            "instructions: semantic coverage, factuality, informativeness, coherence, relevance and fluency. "
            "Needs a judge endpoint with prompt log-probabilities. Lower is better."
        ),
        domain="summarization",
        tasks=["summarization"],
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["expected_output", "actual_output"],
        needs=["llm"],
        metrics=gptscore_metrics(ASPECTS),
        keywords=["gptscore", "summarization", "log-likelihood", "llm-judge", "reference"],
    )
    golden = {
        "good": {
            "categories": ["summarization"],
            "expected_output": "Savings rates rise to 3.25% from May; existing customers switch automatically.",
            "actual_output": "Savings rates rise to 3.25% from May, and existing customers switch automatically.",
        },
        "bad": {
            "categories": ["summarization"],
            "expected_output": "Savings rates rise to 3.25% from May; existing customers switch automatically.",
            "actual_output": "Our cafeteria menu features grilled salmon every Thursday afternoon.",
        },
    }
    family = "sumref"
    aspects = ASPECTS
    metric_threshold: float | None = field(
        default=None,
        metadata={"description": THRESHOLD_PARAMETER},
    )

    def prompts(self, case: CaseContext) -> list[Prompt]:
        return both_ways(case.expected_output.strip(), (case.actual_output or "").strip())
