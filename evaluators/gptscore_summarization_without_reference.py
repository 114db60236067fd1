"""Summarization without reference (GPTScore): how likely the judge model finds the actual answer as a
summary ("Tl;dr") of the question's text, under seven instructions (seed 002)."""

from dataclasses import dataclass, field

from assay.evaluators._gptscore import THRESHOLD_PARAMETER, Aspect, GPTScoreEvaluator, Prompt, gptscore_metrics
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
    Aspect("consistency", "Consistency", "Is the generated text consistent in the information it provides?"),
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
class GPTScoreSummarizationWithoutReference(GPTScoreEvaluator):
    spec = EvaluatorSpec(
        id="gptscore_summarization_without_reference",
        display_name="Summarization without reference (GPTScore)",
        description=(
            "GPTScore for summaries without a reference: the average negative log-likelihood the judge model "
            "gives the actual answer as the summary (after 'Tl;dr') of the question's text, under seven "
            "instructions: semantic coverage, factuality, consistency, informativeness, coherence, relevance "
            "and fluency. Needs a judge endpoint with prompt log-probabilities. Lower is better."
        ),
        domain="summarization",
        tasks=["summarization"],
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["question", "actual_output"],
        needs=["llm"],
        metrics=gptscore_metrics(ASPECTS),
        keywords=["gptscore", "summarization", "log-likelihood", "llm-judge", "tl;dr"],
    )
    golden = {
        "good": {
            "categories": ["summarization"],
            "question": "Summarise: savings rates rise to 3.25% from May and existing customers switch automatically.",
            "actual_output": "Savings rates rise to 3.25% from May; existing customers switch automatically.",
        },
        "bad": {
            "categories": ["summarization"],
            "question": "Summarise: savings rates rise to 3.25% from May and existing customers switch automatically.",
            "actual_output": "Grilled salmon, purple umbrellas, jazz festivals, mountain bicycles.",
        },
    }
    family = "sumnoref"
    aspects = ASPECTS
    metric_threshold: float | None = field(
        default=None,
        metadata={"description": THRESHOLD_PARAMETER},
    )

    def prompts(self, case: CaseContext) -> list[Prompt]:
        variables = {"src": case.question.strip(), "target": (case.actual_output or "").strip()}
        return [Prompt("question -> actual answer", variables, "target")]
