"""Summarization with reference (GPTScore): how likely the judge model finds the summary as a rewrite of the
reference summary, and the reverse, under six instructions (seed 002)."""

from dataclasses import dataclass

from assay.evaluators._gptscore import (
    COHERENCE,
    FACTUALITY,
    FLUENCY,
    INFORMATIVENESS,
    RELEVANCE,
    SEMANTIC_COVERAGE,
    RewriteGPTScoreEvaluator,
    gptscore_spec,
)
from assay.evaluators.base import golden_pair
from assay.evaluators.registry import register

ASPECTS = (SEMANTIC_COVERAGE, FACTUALITY, INFORMATIVENESS, COHERENCE, RELEVANCE, FLUENCY)


@register
@dataclass
class GPTScoreSummarizationWithReference(RewriteGPTScoreEvaluator):
    spec = gptscore_spec(
        "gptscore_summarization_with_reference",
        "Summarization with reference (GPTScore)",
        "GPTScore for summaries with a reference: the average negative log-likelihood the judge model gives "
        "the actual answer as a rewrite of the expected answer (and the reverse, averaged) under six "
        "instructions: semantic coverage, factuality, informativeness, coherence, relevance and fluency. "
        "Needs a judge endpoint with prompt log-probabilities. Lower is better.",
        domain="summarization",
        tasks=["summarization"],
        required_inputs=["expected_output", "actual_output"],
        aspects=ASPECTS,
        keywords=["gptscore", "summarization", "log-likelihood", "llm-judge", "reference"],
    )
    golden = golden_pair(
        "Savings rates rise to 3.25% from May, and existing customers switch automatically.",
        "Our cafeteria menu features grilled salmon every Thursday afternoon.",
        categories=["summarization"],
        expected_output="Savings rates rise to 3.25% from May; existing customers switch automatically.",
    )
    family = "sumref"
    aspects = ASPECTS
