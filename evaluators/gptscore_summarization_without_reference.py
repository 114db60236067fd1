"""Summarization without reference (GPTScore): how likely the judge model finds the actual answer as a
summary ("Tl;dr") of the question's text, under seven instructions (seed 002)."""

from dataclasses import dataclass

from assay.evaluators._gptscore import (
    COHERENCE,
    FACTUALITY,
    FLUENCY,
    INFORMATIVENESS,
    RELEVANCE,
    SEMANTIC_COVERAGE,
    Aspect,
    GPTScoreEvaluator,
    Prompt,
    summarization_golden,
    summarization_spec,
)
from assay.evaluators.base import CaseContext
from assay.evaluators.registry import register

CONSISTENCY = Aspect("consistency", "Consistency", "Is the generated text consistent in the information it provides?")
ASPECTS = (SEMANTIC_COVERAGE, FACTUALITY, CONSISTENCY, INFORMATIVENESS, COHERENCE, RELEVANCE, FLUENCY)


@register
@dataclass
class GPTScoreSummarizationWithoutReference(GPTScoreEvaluator):
    spec = summarization_spec(
        "gptscore_summarization_without_reference",
        "Summarization without reference (GPTScore)",
        "GPTScore for summaries without a reference: the average negative log-likelihood the judge model "
        "gives the actual answer as the summary (after 'Tl;dr') of the question's text, under seven "
        "instructions: semantic coverage, factuality, consistency, informativeness, coherence, relevance "
        "and fluency. Needs a judge endpoint with prompt log-probabilities. Lower is better.",
        required_inputs=["question", "actual_output"],
        aspects=ASPECTS,
        keywords=["gptscore", "summarization", "log-likelihood", "llm-judge", "tl;dr"],
    )
    golden = summarization_golden(
        "Savings rates rise to 3.25% from May; existing customers switch automatically.",
        "Grilled salmon, purple umbrellas, jazz festivals, mountain bicycles.",
        question="Summarise: savings rates rise to 3.25% from May and existing customers switch automatically.",
    )
    family = "sumnoref"
    aspects = ASPECTS

    def prompts(self, case: CaseContext) -> list[Prompt]:
        variables = {"src": case.question.strip(), "target": (case.actual_output or "").strip()}
        return [Prompt("question -> actual answer", variables, "target")]
