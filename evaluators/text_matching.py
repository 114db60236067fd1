"""Text matching: does the answer (and the retrieved context) satisfy the case's condition (seed 002)."""

from dataclasses import dataclass

from assay.evaluators.base import CaseContext, Evaluator, Unscored, golden_pair, verdict_metrics
from assay.evaluators.conditions import ConditionError, parse_condition
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec


@register
@dataclass
class TextMatching(Evaluator):
    spec = EvaluatorSpec(
        id="text_matching",
        display_name="Text matching",
        description=(
            "Checks whether the actual answer and the retrieved context contain the required strings and "
            'match the regular expressions of the test case\'s condition ("..." AND regexp("...") OR NOT ...).'
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["output_condition", "actual_output"],
        metrics=verdict_metrics(
            [
                ("model_passes", "Model passes", "Share of outputs that satisfy the condition."),
                ("model_failures", "Model failures", "Share of outputs that fail the condition."),
                (
                    "model_retrieval_failures",
                    "Model retrieval failures",
                    "Share of retrieved contexts that fail the condition (RAG only).",
                ),
                (
                    "model_generation_failures",
                    "Model generation failures",
                    "Share of outputs generated from the retrieved context that fail the condition.",
                ),
                (
                    "model_parse_failures",
                    "Model parse failures",
                    "Share of cases whose condition could not be parsed or evaluated.",
                ),
            ]
        ),
        keywords=["rules", "regex", "conditions"],
    )

    golden = golden_pair(
        "A £25 fee within 30 days.",
        "There is no fee at all.",
        output_condition='"£25" AND regexp("[0-9]+ days")',
    )


    def score(self, case: CaseContext) -> dict[str, float | None]:
        try:
            condition = parse_condition(case.output_condition)
            passes = condition.matches(case.actual_output or "")
            context = "\n".join(chunk.text for chunk in case.retrieved_context)
            retrieval_ok = condition.matches(context) if case.retrieved_context else None
        except ConditionError as error:
            raise Unscored(
                f"test case {case.test_case_key}: condition {case.output_condition!r}: {error}",
                scores={"model_parse_failures": 1.0},
            ) from error
        failed = 0.0 if passes else 1.0
        return {
            "model_passes": 1.0 - failed,
            "model_failures": failed,
            "model_retrieval_failures": None if retrieval_ok is None else float(not retrieval_ok),
            "model_generation_failures": failed,
            "model_parse_failures": 0.0,
        }
