"""Insights: observations that help choose between systems (seed 002 "Problems and insights")."""

from collections.abc import Callable, Sequence

from assay.artifacts.findings.common import Thresholds, threshold_of

from assay.models import TestLab
from assay.models.evaluation import EvaluationResult
from assay.models.findings import Insight

_WEAK_POINT_ACTION = (
    "Check the prompt, expected answer and condition: are they correct? Check the models' answers in failed cases "
    "and look for a common denominator and/or root cause of these failures."
)


def find_insights(
    lab: TestLab, results: Sequence[EvaluationResult], thresholds: Thresholds = None
) -> list[Insight]:
    insights = [*_operational(lab)]
    for result in results:
        insights += _best_and_worst(lab, result)
        insights += _most_difficult_case(lab, result, thresholds)
        insights += _retrieval(lab, result)
    return insights


def _ranked(result: EvaluationResult, metric_key: str) -> list[tuple[str, float]]:
    """Models by the metric's aggregate, best first."""
    metric = result.evaluator.metric(metric_key)
    values = [
        (model_key, aggregates[metric_key].mean)
        for model_key, aggregates in result.aggregates.items()
        if aggregates[metric_key].mean is not None
    ]
    return sorted(values, key=lambda item: item[1], reverse=metric.higher_is_better)


def _best_and_worst(lab: TestLab, result: EvaluationResult) -> list[Insight]:
    spec = result.evaluator
    ranked = _ranked(result, spec.primary_metric.key)
    if len(ranked) < 2 or ranked[0][1] == ranked[-1][1]:
        return []
    name = spec.primary_metric.display_name
    (best, best_value), (worst, worst_value) = ranked[0], ranked[-1]
    return [
        Insight(
            description=f"Model '{_name(lab, best)}' performs best on {name} ({best_value:.3f}) "
            f"according to the {spec.display_name} evaluator.",
            insight_type="best model",
            attributes={
                "model_key": best,
                "evaluator": spec.id,
                "metric": spec.primary_metric.key,
                "value": best_value,
                "ranking": ranked,
            },
            actions=["Prefer this system where this metric matters; confirm on the most difficult test cases."],
        ),
        Insight(
            description=f"Model '{_name(lab, worst)}' performs worst on {name} ({worst_value:.3f}) "
            f"according to the {spec.display_name} evaluator.",
            insight_type="worst model",
            attributes={
                "model_key": worst,
                "evaluator": spec.id,
                "metric": spec.primary_metric.key,
                "value": worst_value,
                "ranking": ranked,
            },
            actions=["Avoid this system for this use, or fix its weak points before deployment."],
        ),
    ]


def _most_difficult_case(lab: TestLab, result: EvaluationResult, thresholds: Thresholds) -> list[Insight]:
    """The case most models fail on (ties: the lowest mean score in the metric's direction)."""
    spec = result.evaluator
    metric = spec.primary_metric
    threshold = threshold_of(result, metric, thresholds)
    by_case: dict[str, list[float]] = {}
    for row in result.rows:
        value = row.scores.get(metric.key)
        if value is not None:
            by_case.setdefault(row.test_case_key, []).append(value)
    if not by_case or threshold is None:
        return []

    def difficulty(values: list[float]) -> tuple[int, float]:
        failures = sum(not metric.passes(value, threshold) for value in values)
        mean = sum(values) / len(values)
        return failures, -mean if metric.higher_is_better else mean

    case_key, values = max(by_case.items(), key=lambda item: difficulty(item[1]))
    failures = difficulty(values)[0]
    if failures == 0:
        return []
    prompt = next(row.test_case.prompt for row in lab.rows if row.test_case.key == case_key)
    return [
        Insight(
            description=f"Question '{prompt}' is the most difficult question to be correctly answered by the "
            f"evaluated systems according to the {spec.display_name} evaluator ({failures} of {len(values)} "
            "models fail it).",
            insight_type="weak point",
            attributes={
                "test_case_key": case_key,
                "evaluator": spec.id,
                "metric": metric.key,
                "scores": dict(zip(sorted(result.aggregates), values, strict=False)),
            },
            actions=[_WEAK_POINT_ACTION],
        )
    ]


def _retrieval(lab: TestLab, result: EvaluationResult) -> list[Insight]:
    """Best and worst context retrieval, from retrieval evaluators and text matching's retrieval failures."""
    spec = result.evaluator
    if spec.domain == "retrieval":
        metric_key = spec.primary_metric.key
    elif any(metric.key == "model_retrieval_failures" for metric in spec.metrics):
        metric_key = "model_retrieval_failures"
    else:
        return []
    ranked = _ranked(result, metric_key)
    if len(ranked) < 2 or ranked[0][1] == ranked[-1][1]:
        return []
    display = spec.metric(metric_key).display_name
    return [
        Insight(
            description=f"Model '{_name(lab, model_key)}' has the {label} context retrieval ({display} "
            f"{value:.3f}, {spec.display_name}).",
            insight_type=f"{label} retrieval",
            attributes={"model_key": model_key, "evaluator": spec.id, "metric": metric_key, "value": value},
            actions=["Compare the retrieved chunks of the two systems on the failing questions."],
        )
        for label, (model_key, value) in (("best", ranked[0]), ("worst", ranked[-1]))
    ]


def _operational(lab: TestLab) -> list[Insight]:
    """Fastest/slowest by mean duration and cheapest/most expensive by total cost, when models differ."""
    insights: list[Insight] = []

    def extreme(measure: Callable[[str], float | None], unit: str, labels: tuple[str, str]) -> None:
        values = [(model.key, value) for model in lab.models if (value := measure(model.key)) is not None]
        if len(values) < 2:
            return
        values.sort(key=lambda item: item[1])
        if values[0][1] == values[-1][1]:
            return
        for label, (model_key, value) in zip(labels, (values[0], values[-1]), strict=True):
            insights.append(
                Insight(
                    description=f"Model '{_name(lab, model_key)}' is the {label} evaluated system "
                    f"({value:.6g} {unit}).",
                    insight_type=label,
                    attributes={"model_key": model_key, "value": value, "ranking": values},
                    actions=["Weigh this against the accuracy metrics when choosing a system for production."],
                )
            )

    def mean_duration(model_key: str) -> float | None:
        durations = [row.actual_duration for row in lab.rows_for(model_key) if row.actual_duration is not None]
        return sum(durations) / len(durations) if durations else None

    def total_cost(model_key: str) -> float | None:
        costs = [row.cost for row in lab.rows_for(model_key) if row.cost is not None]
        return sum(costs) if costs else None

    extreme(mean_duration, "s per answer on average", ("fastest", "slowest"))
    extreme(total_cost, "in total", ("cheapest", "most expensive"))
    return insights


def _name(lab: TestLab, model_key: str) -> str:
    model = lab.model(model_key)
    return model.name or model.key
