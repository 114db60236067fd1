"""Shared vocabulary of the findings builders: problem types, AVID codes, severities, case references."""

from collections.abc import Mapping
from typing import Any

from assay.models import TestLabRow
from assay.models.evaluation import EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.findings import Severity

# (evaluator id, metric key) -> the threshold in force, as ``ThresholdBook.in_force()`` gives it
Thresholds = Mapping[tuple[str, str], float] | None

# Top-level categories of the AVID taxonomy (avidml.org) the problem types map to.
AVID_CODES = {
    "accuracy": "AVID / P0204 / Accuracy",
    "stability": "AVID / P0201 / Resilience/stability",
    "robustness": "AVID / P0201 / Resilience/stability",
    "retrieval": 'AVID / P0200 / "Ability for the AI to perform as intended"',
    "summarization": "AVID / P0204 / Accuracy",
    "classification": "AVID / P0204 / Accuracy",
    "privacy": "AVID / P0300 / Privacy",
    "security": "AVID / S0100 / Software vulnerability",
    "fairness": "AVID / E0100 / Bias/discrimination",
    "toxicity": "AVID / E0300 / Toxicity",
    "data quality": "AVID / P0100 / Data issues",
    "efficiency": 'AVID / P0200 / "Ability for the AI to perform as intended"',
    "cost": 'AVID / P0200 / "Ability for the AI to perform as intended"',
    "runtime": 'AVID / P0200 / "Ability for the AI to perform as intended"',
}

_DOMAIN_PROBLEM_TYPE = {
    "generation": "accuracy",
    "retrieval": "retrieval",
    "privacy": "privacy",
    "fairness": "fairness",
    "summarization": "summarization",
    "classification": "classification",
}


def problem_type(spec: EvaluatorSpec) -> str:
    return spec.problem_type or _DOMAIN_PROBLEM_TYPE[spec.domain]


def avid_code(kind: str) -> str:
    return AVID_CODES.get(kind, AVID_CODES["accuracy"])


def threshold_of(result: EvaluationResult, metric: MetricMeta, thresholds: Thresholds = None) -> float | None:
    """The run's threshold book (``thresholds``, from ``assay.thresholds``) when given, else the evaluation's."""
    return result.threshold(metric.key, thresholds)


def severity_of_gap(metric: MetricMeta, value: float, threshold: float) -> Severity:
    """How far beyond the threshold an average lies, as a share of the metric's range."""
    low, high = metric.range
    gap = abs(value - threshold) / (high - low) if high > low else 0.0
    return "high" if gap > 0.25 else "medium" if gap > 0.1 else "low"


def case_reference(row: TestLabRow) -> dict[str, Any]:
    """What a reviewer needs to look at a case without opening the test lab."""
    case = row.test_case
    return {
        "test_case_key": case.key,
        "question": case.prompt,
        "expected_answer": case.expected_output,
        "actual_answer": row.actual_output,
        "retrieved_context_doc_uris": [chunk.doc_uri for chunk in row.context],
    }
