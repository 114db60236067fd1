"""Machine Translation (GPTScore): how likely the judge model finds the translation as a rewrite of the
reference, and the reference as a rewrite of the translation (seed 002)."""

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
    Aspect("accuracy", "Accuracy", "Are there inaccuracies, missing, or unfactual content in the generated text?"),
    Aspect("fluency", "Fluency", "Is the generated text well-written and grammatical?"),
    Aspect(
        "multidimensional_quality_metrics",
        "Multidimensional Quality Metrics",
        "How is the overall quality of the generated text?",
        template_suffix="mqm",
    ),
)


@register
@dataclass
class GPTScoreMachineTranslation(GPTScoreEvaluator):
    spec = EvaluatorSpec(
        id="gptscore_machine_translation",
        display_name="Machine Translation (GPTScore)",
        description=(
            "GPTScore for translations: the average negative log-likelihood the judge model gives the actual "
            "answer as a rewrite of the expected answer (and the reverse, averaged) under three instructions: "
            "accuracy, fluency and multidimensional quality. Needs a judge endpoint with prompt "
            "log-probabilities (completions route with echo). Lower is better."
        ),
        domain="generation",
        tasks=["translation"],
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["expected_output", "actual_output"],
        needs=["llm"],
        metrics=gptscore_metrics(ASPECTS),
        keywords=["gptscore", "translation", "log-likelihood", "llm-judge", "fluency", "accuracy"],
    )
    golden = {
        "good": {
            "categories": ["translation"],
            "expected_output": "The branch opens at nine on weekdays and closes at five.",
            "actual_output": "The branch opens at nine on weekdays and closes at five.",
        },
        "bad": {
            "categories": ["translation"],
            "expected_output": "The branch opens at nine on weekdays and closes at five.",
            "actual_output": "Purple elephants sing loudly during winter storms.",
        },
    }
    family = "mt"
    aspects = ASPECTS
    metric_threshold: float | None = field(
        default=None,
        metadata={"description": THRESHOLD_PARAMETER},
    )

    def prompts(self, case: CaseContext) -> list[Prompt]:
        return both_ways(case.expected_output.strip(), (case.actual_output or "").strip())
