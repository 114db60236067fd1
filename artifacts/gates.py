"""Release gates over a finished run's documents: ``METRIC OP VALUE`` pass-rate gates and ``--fail-on``.

What a gate measures. ``groundedness>=0.8`` is read, for every model of the run, as: the share of *scored*
test cases whose groundedness (the evaluator's primary metric) is on the good side of the per-case threshold
in force, must be >= 0.8. The threshold in force is the run's calibrated one for an MRM run whose reviewer
refitted it (``calibration/thresholds.json``), else the run's ``metric_threshold`` override, else the
evaluator's default; each result says which. Unscored cases are neither passes nor in the denominator, and
their number is reported; a gate with no scored case (or on an evaluator the run skipped) is "not
evaluable" and breaches: a gate that cannot be checked must not let a release through.

A metric without a per-case threshold (``latency.mean_duration<=2``) is gated on its mean instead.

METRIC is ``evaluator_id`` (its primary metric), ``evaluator_id.metric_key``, or a metric key that exactly
one evaluator of the run has. VALUE is a number, or a percentage (``80%``) for pass rates.

Pure: it reads ``RunDocuments`` (summary.json, <evaluator>/results.json, problems/problems_and_actions.json),
so ``assay evaluate``, ``assay compare`` and the scheduled re-validation apply the same rules."""

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.artifacts.failed_requests import failed_requests_gate
from assay.artifacts.findings.problems import is_host_failure
from assay.artifacts.report.run_documents import RunDocuments

from assay.escaping import short_line
from assay.models.evaluation import EvaluatorSpec, on_good_side
from assay.models.gates import (
    FAIL_ON_SEVERITIES,
    FailedRequestsLimit,
    FailOn,
    Gate,
    GateReport,
    GateResult,
    SeverityGate,
)
from assay.models.thresholds import recorded_override

_EXPRESSION = re.compile(r"^\s*([A-Za-z0-9_.]+)\s*(>=|<=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(%?)\s*$")
_COMPARE = {">=": float.__ge__, "<=": float.__le__, ">": float.__gt__, "<": float.__lt__}
PROBLEMS_FILE = "problems/problems_and_actions.json"
THRESHOLD_BOOK_FILE = "calibration/thresholds.json"


@dataclass(frozen=True)
class MetricInfo:
    key: str
    higher_is_better: bool
    threshold: float | None
    is_primary: bool


Catalogue = dict[str, list[MetricInfo]]
"""evaluator id -> its metrics: from a run's documents, or from the evaluator registry before a run."""


def parse_gate(expression: str) -> Gate:
    """``groundedness>=0.8`` -> Gate; anything else is a ValueError that names the expression."""
    match = _EXPRESSION.match(expression)
    if match is None:
        raise ValueError(
            f"gate {expression!r}: expected METRIC>=X, METRIC<=X, METRIC>X or METRIC<X "
            "(METRIC: evaluator_id, evaluator_id.metric_key or a metric key; X: a number or a percentage)"
        )
    target, comparison, number, percent = match.groups()
    value = float(number) / (100 if percent else 1)
    return Gate(expression=expression.strip(), target=target, comparison=comparison, value=value)


def parse_gates(expressions: Iterable[str]) -> list[Gate]:
    return [parse_gate(expression) for expression in expressions]


def catalogue_from_specs(specs: Iterable[EvaluatorSpec]) -> Catalogue:
    return {
        spec.id: [MetricInfo(m.key, m.higher_is_better, m.threshold, m.is_primary) for m in spec.metrics]
        for spec in specs
    }


def catalogue_from_run(run: RunDocuments) -> Catalogue:
    """Each evaluator's metrics as its results.json declares them (else as the summary lists them)."""
    catalogue: Catalogue = {}
    for evaluator_id, document in run.results():
        metas = document.get("evaluator", {}).get("metrics_meta", [])
        catalogue[evaluator_id] = [
            MetricInfo(m["key"], bool(m.get("higher_is_better", True)), m.get("threshold"), bool(m.get("is_primary")))
            for m in metas
        ]
    for per_evaluator in (run.get("summary.json") or {}).get("metrics", {}).values():
        for evaluator_id, metrics in per_evaluator.items():
            catalogue.setdefault(
                evaluator_id,
                [MetricInfo(key, m["higher_is_better"], m["threshold"], m["is_primary"]) for key, m in metrics.items()],
            )
    return catalogue


def resolve(gate: Gate, catalogue: Catalogue) -> tuple[str, MetricInfo]:
    """The (evaluator, metric) a gate names; an unknown or ambiguous name is a ValueError with suggestions."""
    evaluator_id, _, metric_key = gate.target.partition(".")
    if evaluator_id in catalogue:
        metrics = catalogue[evaluator_id]
        if not metric_key:
            primary = next((metric for metric in metrics if metric.is_primary), None)
            if primary is None:
                raise ValueError(f"gate {gate.expression!r}: evaluator {evaluator_id} declares no primary metric")
            return evaluator_id, primary
        for metric in metrics:
            if metric.key == metric_key:
                return evaluator_id, metric
        raise ValueError(
            f"gate {gate.expression!r}: evaluator {evaluator_id} has no metric {metric_key!r} "
            f"(it has {', '.join(metric.key for metric in metrics)})"
        )
    owners = [(owner, m) for owner, metrics in catalogue.items() for m in metrics if m.key == gate.target]
    if len(owners) == 1:
        return owners[0]
    if len(owners) > 1:
        names = ", ".join(f"{owner}.{gate.target}" for owner, _ in owners)
        raise ValueError(f"gate {gate.expression!r}: metric {gate.target!r} is ambiguous; name one of {names}")
    known = sorted(set(catalogue) | {m.key for metrics in catalogue.values() for m in metrics})
    close = difflib.get_close_matches(evaluator_id if metric_key else gate.target, known, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise ValueError(f"gate {gate.expression!r}: no evaluator or metric {gate.target!r} in this run{hint}")


def validate_gates(gates: Sequence[Gate], catalogue: Catalogue) -> None:
    """Before a run: every gate names a known metric, and a pass-rate bound lies in [0, 1]."""
    for gate in gates:
        _, metric = resolve(gate, catalogue)
        if metric.threshold is not None and not 0.0 <= gate.value <= 1.0:
            raise ValueError(f"gate {gate.expression!r}: a pass rate lies between 0 and 1 (or 0% and 100%)")


def thresholds_in_force(run: RunDocuments) -> dict[tuple[str, str], tuple[float | None, str]]:
    """(evaluator, metric) -> (per-case threshold, where it came from) for ``run`` (an MRM run: its automated
    evaluation, with calibrated values from its threshold book where a reviewer refitted them)."""
    book = _threshold_book(run.get(THRESHOLD_BOOK_FILE))
    evaluation = run.evaluation()
    table = {}
    for evaluator_id, metrics in catalogue_from_run(evaluation).items():
        document = evaluation.get(f"{evaluator_id}/results.json")
        for metric in metrics:
            key = (evaluator_id, metric.key)
            table[key] = book.get(key) or _run_threshold(document, evaluator_id, metric)
    return table


def check_gates(
    run: RunDocuments,
    gates: Sequence[Gate],
    fail_on: FailOn | None = None,
    failed_requests: FailedRequestsLimit | None = None,
) -> GateReport:
    """Every gate for every model of ``run`` (an MRM run: its automated evaluation, with its threshold book).
    With a ``failed_requests`` limit, failed requests are judged on it alone: ``fail_on`` leaves them out."""
    thresholds = thresholds_in_force(run)
    evaluation = run.evaluation()
    summary = evaluation.get("summary.json") or {}
    catalogue = catalogue_from_run(evaluation)
    results = []
    for gate in gates:
        try:
            evaluator_id, metric = resolve(gate, catalogue)
        except ValueError as error:
            results.append(_not_evaluable(gate, None, None, f"not evaluable: {error}"))
            continue
        threshold, source = thresholds[evaluator_id, metric.key]
        document = evaluation.get(f"{evaluator_id}/results.json")
        results += _apply(gate, document, summary, evaluator_id, metric, (threshold, source))
    problems = evaluation.get(PROBLEMS_FILE)
    severity = _severity_gate(problems, fail_on, apart=failed_requests is not None) if fail_on else None
    requests = failed_requests_gate(evaluation, failed_requests) if failed_requests else None
    breached = any(not result.passed for result in results) or any(
        check is not None and not check.passed for check in (severity, requests)
    )
    return GateReport(run_id=run.run_id, source=run.source, gates=results, severity=severity,
                      failed_requests=requests, breached=breached)  # fmt: skip


def _apply(
    gate: Gate,
    document: dict[str, Any] | None,
    summary: dict[str, Any],
    evaluator_id: str,
    metric: MetricInfo,
    in_force: tuple[float | None, str],
) -> list[GateResult]:
    threshold, source = in_force
    results = []
    for model in summary.get("models", []):
        model_key = model["key"]
        aggregate = summary.get("metrics", {}).get(model_key, {}).get(evaluator_id, {}).get(metric.key, {})
        if threshold is None:
            value, passing = aggregate.get("mean"), 0
            scored, unscored = int(aggregate.get("scored", 0)), int(aggregate.get("unscored", 0))
        else:
            scored, unscored, passing = _case_counts(document, aggregate, model_key, metric, threshold)
            value = passing / scored if scored else None
        statistic = "pass_rate" if threshold is not None else "mean"
        base = {
            "expression": gate.expression, "model_key": model_key, "evaluator": evaluator_id, "metric": metric.key,
            "statistic": statistic, "value": value, "threshold": gate.value, "comparison": gate.comparison,
            "case_threshold": threshold, "case_threshold_source": source, "scored": scored, "unscored": unscored,
            "passing_cases": passing,
        }  # fmt: skip
        if value is None or not scored:
            results.append(
                GateResult(**base, passed=False, reason=f"not evaluable: no scored case ({unscored} unscored)")
            )
            continue
        passed = _COMPARE[gate.comparison](float(value), gate.value)
        measured = (
            f"pass rate {value:.3f} ({passing}/{scored} scored cases {'>=' if metric.higher_is_better else '<='} "
            f"{threshold}, {source}; {unscored} unscored)"
            if statistic == "pass_rate"
            else f"mean {value:.4g} over {scored} scored cases ({unscored} unscored; the metric has no threshold)"
        )
        verdict = "meets" if passed else "breaches"
        results.append(GateResult(**base, passed=passed, reason=f"{measured} {verdict} {gate.comparison} {gate.value}"))
    if not results:
        skipped = (summary.get("skipped_evaluators") or {}).get(evaluator_id)
        why = f"the run skipped {evaluator_id}: {skipped}" if skipped else "the run has no models"
        results.append(_not_evaluable(gate, evaluator_id, metric.key, f"not evaluable: {why}"))
    return results


def _case_counts(
    document: dict[str, Any] | None, aggregate: dict[str, Any], model_key: str, metric: MetricInfo, threshold: float
) -> tuple[int, int, int]:
    """(scored, unscored, passing) of one model from its per-case values; without a results.json (a partial
    store export), the summary's counts, which hold only when it used the same threshold."""
    if document is None:
        if aggregate.get("threshold") != threshold:
            return 0, int(aggregate.get("unscored", 0)), 0
        return int(aggregate.get("scored", 0)), int(aggregate.get("unscored", 0)), int(aggregate.get("passed", 0))
    scores = [row.get(metric.key) for row in document.get("results", []) if row.get("model_key") == model_key]
    scored_values = [float(score) for score in scores if score is not None]
    passing = sum(1 for score in scored_values if on_good_side(score, threshold, metric.higher_is_better))
    return len(scored_values), len(scores) - len(scored_values), passing


def _run_threshold(document: dict[str, Any] | None, evaluator_id: str, metric: MetricInfo) -> tuple[float | None, str]:
    """The threshold results.json declares (the one in force while scoring) and who set it."""
    if metric.threshold is None:
        return None, "no threshold"
    origin = recorded_override((document or {}).get("evaluator", {}), metric.key, metric.is_primary)
    return metric.threshold, origin or f"{evaluator_id} default"


def _threshold_book(document: Any) -> dict[tuple[str, str], tuple[float | None, str]]:
    if not isinstance(document, dict):
        return {}
    return {
        (entry["evaluator_id"], entry["metric"]): (
            entry.get("threshold"),
            f"{THRESHOLD_BOOK_FILE}: {entry.get('set_by')}",
        )
        for entry in document.get("entries", [])
        if entry.get("source") == "calibrated"
    }


def _severity_gate(document: Any, fail_on: FailOn, *, apart: bool = False) -> SeverityGate:
    """``apart``: failed requests have their own gate, so the host-failure problems are not counted here."""
    if not isinstance(document, dict):
        return SeverityGate(
            fail_on=fail_on, counted={}, matching=0, passed=False,
            reason=f"not evaluable: the run has no {PROBLEMS_FILE}",
        )  # fmt: skip
    if apart:
        document = {**document, "problems": [p for p in document.get("problems", []) if not is_host_failure(p)]}
    counted = {"high": 0, "medium": 0, "low": 0}
    for problem in document.get("problems", []):
        counted[problem.get("severity", "low")] = counted.get(problem.get("severity", "low"), 0) + 1
    levels = FAIL_ON_SEVERITIES[fail_on]
    matching = sum(counted.get(level, 0) for level in levels)
    described = ", ".join(f"{counted[level]} {level}" for level in ("high", "medium", "low"))
    passed = matching == 0
    found = "none" if passed else f"{matching} breach ({_named_problems(document, levels)})"
    apart_note = " (failed requests judged apart)" if apart else ""
    reason = f"{described} problems{apart_note}; --fail-on {fail_on} counts {'/'.join(levels)}: {found}"
    return SeverityGate(fail_on=fail_on, counted=counted, matching=matching, passed=passed, reason=reason)


def _named_problems(document: dict[str, Any], levels: Sequence[str], shown: int = 3) -> str:
    """The breaching problems in words, the most severe first, so a failed run's message says which."""
    order = {"high": 0, "medium": 1, "low": 2}
    found = sorted((p for p in document.get("problems", []) if p.get("severity", "low") in levels),
                   key=lambda problem: order.get(problem.get("severity", "low"), 3))  # fmt: skip
    named = [f"{problem.get('severity', 'low')}: {short_line(str(problem.get('description', '')), 160)}"
             for problem in found[:shown]]  # fmt: skip
    return "; ".join(named) + (f"; and {len(found) - shown} more" if len(found) > shown else "")


def _not_evaluable(gate: Gate, evaluator_id: str | None, metric_key: str | None, reason: str) -> GateResult:
    return GateResult(
        expression=gate.expression, model_key=None, evaluator=evaluator_id, metric=metric_key, value=None,
        threshold=gate.value, comparison=gate.comparison, passed=False, reason=reason,
    )  # fmt: skip
