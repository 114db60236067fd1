"""Runs evaluators over a test lab: batching, unscored bookkeeping and per-model aggregates."""

import math
import time
from collections.abc import Sequence

from assay.models import TestLab
from assay.models.evaluation import CaseScores, EvaluationResult, MetricAggregate
from evaluators.base import CaseContext, Evaluator, Unscored


def score_case(evaluator: Evaluator, case: CaseContext) -> CaseScores:
    """Score one case; every way of not scoring becomes a recorded reason, never a zero."""
    outcome = CaseScores(test_case_key=case.test_case_key, model_key=case.model_key)
    if case.host_error is not None:
        outcome.unscored_reason = f"host error: {case.host_error}"
        return outcome
    missing = case.missing(evaluator.spec.required_inputs)
    if missing:
        outcome.unscored_reason = f"missing input: {', '.join(missing)}"
        return outcome
    try:
        scores = evaluator.score(case)
    except Unscored as unscored:
        outcome.unscored_reason = unscored.reason
        outcome.scores = dict(unscored.scores)
        return outcome
    except Exception as error:  # a plugin bug is recorded on the case, it never aborts the run
        outcome.unscored_reason = f"evaluator error: {type(error).__name__}: {error}"
        return outcome
    for key, value in scores.items():
        if value is not None and not math.isfinite(value):
            scores[key] = None
    outcome.scores = scores
    return outcome


def aggregate(evaluator: Evaluator, rows: Sequence[CaseScores]) -> dict[str, dict[str, MetricAggregate]]:
    """Per model, per metric: mean over scored cases only, with scored/unscored/passed counts."""
    by_model: dict[str, list[CaseScores]] = {}
    for row in rows:
        by_model.setdefault(row.model_key, []).append(row)
    result: dict[str, dict[str, MetricAggregate]] = {}
    for model_key, model_rows in by_model.items():
        result[model_key] = {}
        for metric in evaluator.spec.metrics:
            values = [row.scores[metric.key] for row in model_rows if row.scores.get(metric.key) is not None]
            threshold = evaluator.threshold(metric.key)
            result[model_key][metric.key] = MetricAggregate(
                mean=round(sum(values) / len(values), 6) if values else None,
                scored=len(values),
                unscored=len(model_rows) - len(values),
                passed=sum(1 for value in values if metric.passes(value, threshold)),
            )
    return result


def run_evaluator(evaluator: Evaluator, lab: TestLab) -> EvaluationResult:
    started = time.perf_counter()
    cases = [CaseContext.from_row(row) for row in lab.rows]
    scorable = [
        index
        for index, case in enumerate(cases)
        if not case.host_error and not case.missing(evaluator.spec.required_inputs)
    ]
    prepare_error = evaluator.unavailable_reason()
    if prepare_error is None:
        try:
            evaluator.prepare([cases[index] for index in scorable])
        except Unscored as unscored:
            prepare_error = unscored.reason
    blocked = set(scorable) if prepare_error else set()
    rows = [
        CaseScores(test_case_key=case.test_case_key, model_key=case.model_key, unscored_reason=prepare_error)
        if index in blocked
        else score_case(evaluator, case)
        for index, case in enumerate(cases)
    ]
    return EvaluationResult(
        evaluator=evaluator.full_spec(),
        parameters=evaluator.parameters(),
        rows=rows,
        aggregates=aggregate(evaluator, rows),
        elapsed_s=round(time.perf_counter() - started, 3),
    )
