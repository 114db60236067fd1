"""Runs evaluators over a test lab: batching, unscored bookkeeping and per-model aggregates."""

import math
import time
from collections.abc import Sequence
from typing import Any

from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored
from assay.evaluators.registry import origin_of

from assay.models import TestLab
from assay.models.evaluation import CaseScores, EvaluationResult, MetricAggregate
from assay.progress import Progress, part, report

PREPARE_SHARE = 0.5
"""Of one evaluator's progress: ``prepare`` does the batch work of embedding and NLI evaluators, ``score``
the per-case work of judged ones; which dominates is the evaluator's business, so each gets half."""


def _error_reason(error: Exception) -> str:
    return f"evaluator error: {type(error).__name__}: {error}"


def skip_reason(evaluator: Evaluator, case: CaseContext) -> str | None:
    """Why the case is not scored before ``score`` is even tried (host error, missing input, not applicable),
    or None. ``inapplicable_reason`` runs under the per-case guard: what it raises is that case's reason."""
    if case.host_error is not None:
        return f"host error: {case.host_error}"
    missing = case.missing(evaluator.spec.required_inputs)
    if missing:
        absent = f" ({case.answer_absent})" if "actual_output" in missing and case.answer_absent else ""
        return f"missing input: {', '.join(missing)}{absent}"
    try:
        reason = evaluator.inapplicable_reason(case)
    except Exception as error:  # a plugin bug is recorded on the case, it never aborts the run
        return _error_reason(error)
    return None if reason is None else f"not applicable: {reason}"


def score_case(evaluator: Evaluator, case: CaseContext) -> CaseScores:
    """Score one case; every way of not scoring becomes a recorded reason, never a zero."""
    outcome = CaseScores(test_case_key=case.test_case_key, model_key=case.model_key)
    outcome.unscored_reason = skip_reason(evaluator, case)
    if outcome.unscored_reason is not None:
        return outcome
    try:
        scored = evaluator.score(case)
    except Unscored as unscored:
        outcome.unscored_reason = unscored.reason
        outcome.scores = dict(unscored.scores)
        outcome.details = dict(unscored.details)
        return outcome
    except Exception as error:  # a plugin bug is recorded on the case, it never aborts the run
        outcome.unscored_reason = _error_reason(error)
        return outcome
    if isinstance(scored, Scored):
        scores, outcome.details = dict(scored.scores), dict(scored.details)
    else:
        scores = dict(scored)
    for key, value in scores.items():
        if value is not None and not math.isfinite(value):
            scores[key] = None
    outcome.scores = scores
    return outcome


def aggregate(
    evaluator: Evaluator, cases: Sequence[CaseContext], rows: Sequence[CaseScores]
) -> tuple[dict[str, dict[str, MetricAggregate]], dict[str, dict[str, Any]]]:
    """Per model, per metric: mean over scored cases only (or the evaluator's corpus-level value), with
    scored/unscored/passed counts; plus per-model run-level details."""
    by_model: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_model.setdefault(row.model_key, []).append(index)
    result: dict[str, dict[str, MetricAggregate]] = {}
    details: dict[str, dict[str, Any]] = {}
    for model_key, indexes in by_model.items():
        model_rows = [rows[index] for index in indexes]
        scored_cases = [cases[index] for index in indexes if rows[index].unscored_reason is None]
        scored_rows = [row for row in model_rows if row.unscored_reason is None]
        overrides, model_details = evaluator.corpus_metrics(scored_cases, scored_rows) if scored_rows else ({}, {})
        if model_details:
            details[model_key] = model_details
        result[model_key] = {}
        for metric in evaluator.spec.metrics:
            values = [row.scores[metric.key] for row in model_rows if row.scores.get(metric.key) is not None]
            threshold = evaluator.threshold(metric.key)
            corpus_level = metric.key in overrides
            mean = overrides[metric.key] if corpus_level else (sum(values) / len(values) if values else None)
            result[model_key][metric.key] = MetricAggregate(
                mean=None if mean is None else round(mean, 6),
                scored=len(values),
                unscored=len(model_rows) - len(values),
                passed=sum(1 for value in values if metric.passes(value, threshold)),
                corpus_level=corpus_level,
            )
    return result, details


def _prepare(evaluator: Evaluator, cases: list[CaseContext]) -> str | None:
    """Why no case can be scored (evaluator unavailable here, failed batch), or None once ``prepare`` ran."""
    try:
        reason = evaluator.unavailable_reason()
        if reason is None:
            evaluator.prepare(cases)
    except Unscored as unscored:
        return unscored.reason
    except Exception as error:  # a failed batch (inference, I/O) marks its cases, it never aborts the run
        return _error_reason(error)
    return reason


def run_evaluator(evaluator: Evaluator, lab: TestLab, progress: Progress | None = None) -> EvaluationResult:
    """``progress`` hears PREPARE_SHARE once the batch work is done, then the share of cases scored."""
    started = time.perf_counter()
    cases = [evaluator.context_for(row) for row in lab.rows]
    skipped = [skip_reason(evaluator, case) for case in cases]
    scorable = [index for index, reason in enumerate(skipped) if reason is None]
    prepare_error = _prepare(evaluator, [cases[index] for index in scorable])
    blocked = set(scorable) if prepare_error else set()
    scoring = part(progress, PREPARE_SHARE, 1.0)
    report(scoring, 0.0)
    rows = []
    for index, case in enumerate(cases):
        reason = prepare_error if index in blocked else skipped[index]
        if reason is None:
            rows.append(score_case(evaluator, case))
        else:
            rows.append(CaseScores(test_case_key=case.test_case_key, model_key=case.model_key, unscored_reason=reason))
        report(scoring, (index + 1) / len(cases))
    aggregates, details = aggregate(evaluator, cases, rows)
    return EvaluationResult(
        evaluator=evaluator.full_spec(),
        parameters=evaluator.parameters(),
        rows=rows,
        aggregates=aggregates,
        model_details=details,
        judge=evaluator.judge_summary(),
        origin=origin_of(evaluator),
        elapsed_s=round(time.perf_counter() - started, 3),
    )
