"""Which evaluation results the quality steps of the MRM workflow may use.

Latency, token counts and cost say how a system ran, not what it answered, and latency is wall-clock time:
two runs on the same inputs measure different values. Fed into failure clustering, weakness detection,
calibration or robustness flips, it made two uninterrupted runs differ in 912 values (clusters 134/128 vs
146/116). Those steps therefore see quality metrics only; operational metrics stay in the evaluation step's
results, leaderboards and problems, where they are reported as measured.
"""

from collections.abc import Sequence

from assay.models.evaluation import EvaluationResult, EvaluatorSpec

OPERATIONAL_INPUTS = frozenset({"duration", "cost", "tokens"})
"""Inputs that measure the run, not the answer (see ``CaseInput``)."""


def is_operational(spec: EvaluatorSpec) -> bool:
    """True for an evaluator that only measures the run: every input it needs is operational."""
    return bool(spec.required_inputs) and set(spec.required_inputs) <= OPERATIONAL_INPUTS


def quality_results(results: Sequence[EvaluationResult]) -> list[EvaluationResult]:
    """``results`` without the operational evaluators', in their order."""
    return [result for result in results if not is_operational(result.evaluator)]
