"""Machine Translation (GPTScore): how likely the judge model finds the translation as a rewrite of the
reference, and the reference as a rewrite of the translation (seed 002)."""

from dataclasses import dataclass

from assay.evaluators._gptscore import FLUENCY, Aspect, RewriteGPTScoreEvaluator, gptscore_spec
from assay.evaluators.base import golden_pair
from assay.evaluators.registry import register

ASPECTS = (
    Aspect("accuracy", "Accuracy", "Are there inaccuracies, missing, or unfactual content in the generated text?"),
    FLUENCY,
    Aspect(
        "multidimensional_quality_metrics",
        "Multidimensional Quality Metrics",
        "How is the overall quality of the generated text?",
        template_suffix="mqm",
    ),
)


@register
@dataclass
class GPTScoreMachineTranslation(RewriteGPTScoreEvaluator):
    spec = gptscore_spec(
        "gptscore_machine_translation",
        "Machine Translation (GPTScore)",
        "GPTScore for translations: the average negative log-likelihood the judge model gives the actual "
        "answer as a rewrite of the expected answer (and the reverse, averaged) under three instructions: "
        "accuracy, fluency and multidimensional quality. Needs a judge endpoint with prompt "
        "log-probabilities (completions route with echo). Lower is better.",
        domain="generation",
        tasks=["translation"],
        required_inputs=["expected_output", "actual_output"],
        aspects=ASPECTS,
        keywords=["gptscore", "translation", "log-likelihood", "llm-judge", "fluency", "accuracy"],
    )
    golden = golden_pair(
        "The branch opens at nine on weekdays and closes at five.",
        "Purple elephants sing loudly during winter storms.",
        categories=["translation"],
        expected_output="The branch opens at nine on weekdays and closes at five.",
    )
    family = "mt"
    aspects = ASPECTS
