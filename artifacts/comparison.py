"""What changed between a baseline run and a current run, per model and metric, with the uncertainty.

Each delta carries a 95% bootstrap interval (2,000 resamples, fixed seed) so a re-validation does not raise an
alarm over noise. When both runs scored enough of the same test cases (at least 2, and at least half of the
smaller run), the cases are paired by test case key and the mean paired difference is resampled (tighter:
each case is its own control); otherwise the two runs are resampled independently ("unpaired"). A change is
significant when the interval lies entirely on one side of 0; with fewer than 2 cases there is no interval.
The comparison records what it compared and what it left out (``compared``): when no test case was scored in
both runs on any metric, nothing was comparable, and a "no regression" would be vacuous.

A case "fails" an evaluator when its primary metric misses the threshold in force in that run, so a case
that newly fails is judged by the same rules each run published. Problems are matched by a stable key
(evaluator, problem type, metric, model and, for per-case problems, the test case), never by their wording.

Pure: reads two ``RunDocuments`` (an MRM run: its automated-evaluation part) and returns a ``Comparison``."""

import zlib
from collections import Counter
from typing import Any

import numpy as np
from assay.artifacts.comparison_coverage import CoverageTally, Scores
from assay.artifacts.gates import PROBLEMS_FILE, catalogue_from_run, thresholds_in_force
from assay.artifacts.report.run_documents import RunDocuments

from assay.models.comparison import CaseChange, Comparison, MetricDelta, ProblemChange, RunReference, Unmatched
from assay.models.evaluation import on_good_side
from assay.models.hosts import TRACES_HOST_TYPE

RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 0


def compare_runs(baseline: RunDocuments, current: RunDocuments, *, seed: int = SEED) -> Comparison:
    base, cur = baseline.evaluation(), current.evaluation()
    base_thresholds, cur_thresholds = thresholds_in_force(baseline), thresholds_in_force(current)
    base_catalogue, cur_catalogue = catalogue_from_run(base), catalogue_from_run(cur)
    base_models, cur_models = _models(base), _models(cur)
    base_samples, cur_samples = _production_samples(base), _production_samples(cur)
    unmatched = Unmatched(
        models_only_in_baseline=sorted(set(base_models) - set(cur_models)),
        models_only_in_current=sorted(set(cur_models) - set(base_models)),
        evaluators_only_in_baseline=sorted(set(base_catalogue) - set(cur_catalogue)),
        evaluators_only_in_current=sorted(set(cur_catalogue) - set(base_catalogue)),
    )
    if not set(base_models) & set(cur_models):
        unmatched.notes.append("no model key is in both runs: models are matched by key, so nothing was compared")
    tally = CoverageTally.starting_from(
        unmatched,
        models_in_both=len(set(base_models) & set(cur_models)),
        evaluators_in_both=len(set(base_catalogue) & set(cur_catalogue)),
    )
    questions = _questions(cur) | _questions(base)
    deltas: list[MetricDelta] = []
    case_changes: list[CaseChange] = []
    for evaluator_id in [e for e in cur_catalogue if e in base_catalogue]:
        base_metrics = {metric.key: metric for metric in base_catalogue[evaluator_id]}
        cur_metric_keys = {metric.key for metric in cur_catalogue[evaluator_id]}
        for key in [key for key in base_metrics if key not in cur_metric_keys]:
            tally.metric_in_one_run(evaluator_id, key, "baseline")
        for metric in cur_catalogue[evaluator_id]:
            if metric.key not in base_metrics:
                tally.metric_in_one_run(evaluator_id, metric.key, "current run")
                continue
            base_threshold = base_thresholds[evaluator_id, metric.key][0]
            cur_threshold, source = cur_thresholds[evaluator_id, metric.key]
            for model_key in [m for m in cur_models if m in base_models]:
                before = _scores(base, evaluator_id, metric.key, model_key)
                after = _scores(cur, evaluator_id, metric.key, model_key)
                if before is None or after is None:
                    tally.no_results(model_key, evaluator_id, metric.key)
                    continue
                samples = model_key in base_samples and model_key in cur_samples
                cases = tally.triple(model_key, evaluator_id, metric.key, before, after, samples=samples)
                rng = np.random.default_rng([seed, zlib.crc32(f"{model_key}|{evaluator_id}|{metric.key}".encode())])
                delta = _delta(before, after, metric.higher_is_better, rng)
                deltas.append(
                    MetricDelta(
                        model_key=model_key, evaluator=evaluator_id, metric=metric.key, is_primary=metric.is_primary,
                        higher_is_better=metric.higher_is_better, baseline_threshold=base_threshold,
                        current_threshold=cur_threshold, threshold_source=source,
                        baseline_pass_rate=_pass_rate(before, base_threshold, metric.higher_is_better),
                        current_pass_rate=_pass_rate(after, cur_threshold, metric.higher_is_better),
                        **_counts(before, "baseline"), **_counts(after, "current"), **delta, **cases,
                    )
                )  # fmt: skip
                if metric.is_primary:
                    thresholds = (base_threshold, cur_threshold)
                    case_changes += _case_changes(base, cur, evaluator_id, metric, model_key, thresholds, questions)
    return Comparison(
        baseline=RunReference(run_id=baseline.run_id, source=baseline.source, kind=baseline.kind),
        current=RunReference(run_id=current.run_id, source=current.source, kind=current.kind),
        confidence=CONFIDENCE,
        resamples=RESAMPLES,
        seed=seed,
        deltas=deltas,
        case_changes=case_changes,
        problem_changes=_problem_changes(base.get(PROBLEMS_FILE), cur.get(PROBLEMS_FILE), unmatched),
        unmatched=unmatched,
        compared=tally.coverage(),
    )


def bootstrap_delta(
    before: np.ndarray, after: np.ndarray, *, paired: bool, rng: np.random.Generator
) -> tuple[float, float, float]:
    """(delta, low, high): the mean difference current - baseline and its percentile bootstrap interval, by
    ``scipy.stats.bootstrap`` from ``rng``: paired, one ``integers(0, n, (RESAMPLES, n))`` draw of case positions;
    unpaired, one such draw for the baseline, then one for the current run. Each run needs at least 2 values."""
    from scipy.stats import bootstrap

    statistic = _paired_mean_difference if paired else _mean_difference
    delta = float(statistic(before, after))
    result = bootstrap((before, after), statistic, n_resamples=RESAMPLES, vectorized=True, paired=paired,
                       confidence_level=CONFIDENCE, method="percentile", rng=rng)  # fmt: skip
    low, high = result.confidence_interval
    return delta, float(low), float(high)


def _paired_mean_difference(before: np.ndarray, after: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(after - before, axis=axis)


def _mean_difference(before: np.ndarray, after: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(after, axis=axis) - np.mean(before, axis=axis)


def _delta(before: Scores, after: Scores, higher_is_better: bool, rng: np.random.Generator) -> dict[str, Any]:
    scored_before = {key: value for key, value in before.items() if value is not None}
    scored_after = {key: value for key, value in after.items() if value is not None}
    shared = sorted(set(scored_before) & set(scored_after))
    paired = len(shared) >= 2 and len(shared) * 2 >= min(len(scored_before), len(scored_after))
    result: dict[str, Any] = {
        "baseline_mean": _mean(scored_before.values()),
        "current_mean": _mean(scored_after.values()),
        "pairing": None, "paired_cases": len(shared) if paired else 0,
        "delta": None, "ci_low": None, "ci_high": None, "change": "not comparable",
    }  # fmt: skip
    if paired:
        arrays = np.array([scored_before[key] for key in shared]), np.array([scored_after[key] for key in shared])
    elif len(scored_before) >= 2 and len(scored_after) >= 2:
        arrays = np.array(list(scored_before.values())), np.array(list(scored_after.values()))
    else:
        if result["baseline_mean"] is not None and result["current_mean"] is not None:
            result["delta"] = result["current_mean"] - result["baseline_mean"]
            result["change"] = "no significant change"
        return result
    delta, low, high = bootstrap_delta(*arrays, paired=paired, rng=rng)
    worse = high < 0 if higher_is_better else low > 0
    better = low > 0 if higher_is_better else high < 0
    change = "worse" if worse else "better" if better else "no significant change"
    return result | {"pairing": "paired" if paired else "unpaired", "delta": delta, "ci_low": low, "ci_high": high,
                     "change": change}  # fmt: skip


def _case_changes(
    base: RunDocuments,
    cur: RunDocuments,
    evaluator_id: str,
    metric: Any,
    model_key: str,
    thresholds: tuple[float | None, float | None],
    questions: dict[str, str],
) -> list[CaseChange]:
    before_rows = _rows(base, evaluator_id, model_key)
    after_rows = _rows(cur, evaluator_id, model_key)
    changes = []
    for key in [key for key in after_rows if key in before_rows]:
        before, after = before_rows[key].get(metric.key), after_rows[key].get(metric.key)
        kind = reason = None
        if before is not None and after is None:
            kind, reason = "newly unscored", after_rows[key].get("unscored_reason") or ""
        elif before is None and after is not None:
            kind, reason = "newly scored", before_rows[key].get("unscored_reason") or ""
        elif before is not None and after is not None and None not in thresholds:
            passed_before = on_good_side(before, thresholds[0], metric.higher_is_better)
            passed_after = on_good_side(after, thresholds[1], metric.higher_is_better)
            if passed_before != passed_after:
                kind = "newly passes" if passed_after else "newly fails"
        if kind is not None:
            changes.append(
                CaseChange(
                    model_key=model_key, evaluator=evaluator_id, metric=metric.key, test_case_key=key,
                    question=questions.get(key, ""), change=kind, baseline_value=before, current_value=after,
                    reason=reason or "",
                )
            )  # fmt: skip
    return changes


def problem_key(problem: dict[str, Any]) -> str:
    """Stable across runs: what kind of problem, where; never the description's wording or the values."""
    attributes = problem.get("attributes") or {}
    perturbed = attributes.get("perturbed")
    case = attributes.get("test_case_key") or (perturbed.get("test_case_key") if isinstance(perturbed, dict) else "")
    parts = [attributes.get("evaluator") or "-", problem.get("problem_type") or "-", attributes.get("metric") or "-",
             attributes.get("model_key") or "-"] + ([str(case)] if case else [])  # fmt: skip
    return " | ".join(str(part) for part in parts)


def _problem_changes(base_document: Any, cur_document: Any, unmatched: Unmatched) -> list[ProblemChange]:
    if not isinstance(base_document, dict) or not isinstance(cur_document, dict):
        unmatched.notes.append(f"problems not compared: a run has no {PROBLEMS_FILE}")
        return []
    only_one_run = set(unmatched.evaluators_only_in_baseline) | set(unmatched.evaluators_only_in_current)
    only_one_run |= set(unmatched.models_only_in_baseline) | set(unmatched.models_only_in_current)

    def comparable(problem: dict[str, Any]) -> bool:
        """A problem of an evaluator or model that only one run has is neither new nor resolved."""
        attributes = problem.get("attributes") or {}
        return not {attributes.get("evaluator"), attributes.get("model_key")} & only_one_run

    base_problems = [problem for problem in base_document.get("problems", []) if comparable(problem)]
    cur_problems = [problem for problem in cur_document.get("problems", []) if comparable(problem)]
    base_keys = Counter(problem_key(problem) for problem in base_problems)
    cur_keys = Counter(problem_key(problem) for problem in cur_problems)
    changes = []
    for status, problems, other in (("new", cur_problems, base_keys), ("resolved", base_problems, cur_keys)):
        seen: Counter[str] = Counter()
        for problem in problems:
            key = problem_key(problem)
            seen[key] += 1
            if seen[key] > other[key]:
                changes.append(
                    ProblemChange(
                        key=key, status=status, severity=str(problem.get("severity", "")),
                        problem_type=str(problem.get("problem_type", "")),
                        description=str(problem.get("description", "")),
                    )
                )  # fmt: skip
    return changes


def _models(run: RunDocuments) -> list[str]:
    return [model["key"] for model in (run.get("summary.json") or {}).get("models", [])]


def _production_samples(run: RunDocuments) -> set[str]:
    """Models whose answers were read from production traces: a run of them is a sample of requests."""
    models = (run.get("summary.json") or {}).get("models", [])
    return {model["key"] for model in models if model.get("type") == TRACES_HOST_TYPE}


def _rows(run: RunDocuments, evaluator_id: str, model_key: str) -> dict[str, dict[str, Any]]:
    document = run.get(f"{evaluator_id}/results.json") or {}
    return {
        str(row.get("test_case_key") or row.get("key")): row
        for row in document.get("results", [])
        if row.get("model_key") == model_key
    }


def _scores(run: RunDocuments, evaluator_id: str, metric_key: str, model_key: str) -> Scores | None:
    if run.get(f"{evaluator_id}/results.json") is None:
        return None
    return {key: _number(row.get(metric_key)) for key, row in _rows(run, evaluator_id, model_key).items()}


def _questions(run: RunDocuments) -> dict[str, str]:
    questions: dict[str, str] = {}
    for _, document in run.results():
        for row in document.get("results", []):
            questions.setdefault(str(row.get("test_case_key")), str(row.get("input") or ""))
        if questions:
            break
    return questions


def _counts(scores: Scores, prefix: str) -> dict[str, int]:
    scored = sum(1 for value in scores.values() if value is not None)
    return {f"{prefix}_scored": scored, f"{prefix}_unscored": len(scores) - scored}


def _pass_rate(scores: Scores, threshold: float | None, higher_is_better: bool) -> float | None:
    values = [value for value in scores.values() if value is not None]
    if threshold is None or not values:
        return None
    return sum(1 for value in values if on_good_side(value, threshold, higher_is_better)) / len(values)


def _mean(values: Any) -> float | None:
    items = list(values)
    return float(np.mean(items)) if items else None


def _number(value: Any) -> float | None:
    """A finite number, or None (unscored; also a non-number a hostile file put there)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        return None
    return float(value)
