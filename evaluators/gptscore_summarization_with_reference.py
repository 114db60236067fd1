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
    summarization_golden,
    summarization_spec,
)
from assay.evaluators.registry import register

ASPECTS = (SEMANTIC_COVERAGE, FACTUALITY, INFORMATIVENESS, COHERENCE, RELEVANCE, FLUENCY)


@register
@dataclass
class GPTScoreSummarizationWithReference(RewriteGPTScoreEvaluator):
    spec = summarization_spec(
        "gptscore_summarization_with_reference",
        "Summarization with reference (GPTScore)",
        "GPTScore for summaries with a reference: the average negative log-likelihood the judge model gives "
        "the actual answer as a rewrite of the expected answer (and the reverse, averaged) under six "
        "instructions: semantic coverage, factuality, informativeness, coherence, relevance and fluency. "
        "Needs a judge endpoint with prompt log-probabilities. Lower is better.",
        required_inputs=["expected_output", "actual_output"],
        aspects=ASPECTS,
        keywords=["gptscore", "summarization", "log-likelihood", "llm-judge", "reference"],
    )
    golden = summarization_golden(
        "Savings rates rise to 3.25% from May, and existing customers switch automatically.",
        "Our cafeteria menu features grilled salmon every Thursday afternoon.",
        expected_output="Savings rates rise to 3.25% from May; existing customers switch automatically.",
    )
    family = "sumref"
    aspects = ASPECTS
