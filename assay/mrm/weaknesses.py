"""Step 7 of the MRM workflow (seed 002 "Weakness detection"): where does the system under test score badly?
Each evaluator's primary metric is broken down by topic, by question type and by the topic x question-type
grid (the seed's "bivariate analysis"), with the mean, the number of scored cases and the pass rate per group.

Per model, not over all models together: pooling two systems would hide a weak one behind a strong one and
mix "this topic is hard" with "this model is bad". Every key therefore starts with the model:
``by_topic["<model_key>:<topic>"]``, ``by_question_type["<model_key>:<question type>"]`` and
``grid["<model_key>:<topic>"]["<question type>"]`` (model keys never hold ':'; see ``TestLabRow.row_key``).

Unscored cases (the host failed, the evaluator could not score) are never zeros: they stay out of every mean
and pass rate and are counted on their own, per model, under the reserved group ``(unscored)`` of
``by_topic`` and ``by_question_type`` (mean None). A group whose cases are all unscored therefore does not
appear with a mean of its own.

``weakest`` names, in words, the groups of at least MIN_WEAK_CASES cases whose mean is more than one standard
deviation (of that model's case scores) on the bad side of that model's overall mean; the bad side is below
for higher-is-better metrics and above for the others. Worst gap first; a grid cell holding exactly the cases of
its topic or question type is not listed twice; the model is named only when the lab has several.
"""

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev

from assay.models import TestCase, TestLab
from assay.models.evaluation import EvaluationResult, MetricMeta
from assay.models.mrm import GroupStat, MetricWeaknesses, WeaknessReport
from assay.mrm.operational import quality_results

UNKNOWN = "unknown"
UNSCORED = "(unscored)"
MIN_WEAK_CASES = 3
Thresholds = Mapping[tuple[str, str], float]


@dataclass(frozen=True)
class _Scored:
    model_key: str
    topic: str
    question_type: str
    value: float
    passed: bool | None


def question_type(case: TestCase) -> str:
    """The generator that wrote the case, else its first category, else 'unknown'."""
    return case.generator or (case.categories[0] if case.categories else UNKNOWN)


def detect_weaknesses(
    lab: TestLab, results: Sequence[EvaluationResult], *, thresholds: Thresholds | None = None
) -> WeaknessReport:
    """One breakdown per evaluator's primary metric; ``thresholds`` (calibrated, keyed by (evaluator, metric))
    take precedence over the result's ``metric_threshold`` parameter and the metric's default. Operational
    metrics (latency, tokens, cost) are left out: weaknesses are about answers (``assay.mrm.operational``)."""
    cases = {(row.model_key, row.test_case.key): row.test_case for row in lab.rows}
    metrics = []
    for result in quality_results(results):
        metric = next((item for item in result.evaluator.metrics if item.is_primary), None)
        if metric is None:
            continue
        threshold = result.threshold(metric.key, thresholds)
        scored: list[_Scored] = []
        unscored: defaultdict[str, int] = defaultdict(int)
        for row in result.rows:
            case = cases.get((row.model_key, row.test_case_key))
            if case is None:
                raise ValueError(
                    f"evaluator {result.evaluator.id}: row {row.model_key}:{row.test_case_key} is not in lab "
                    f"{lab.name!r}; weaknesses need the lab the results were computed on"
                )
            value = row.scores.get(metric.key)
            if value is None or not math.isfinite(value):
                unscored[row.model_key] += 1
                continue
            passed = metric.passes(value, threshold) if threshold is not None else None
            scored.append(_Scored(row.model_key, case.topic or UNKNOWN, question_type(case), value, passed))
        metrics.append(_breakdown(result.evaluator.id, metric, scored, unscored))
    return WeaknessReport(metrics=metrics)


def _breakdown(
    evaluator_id: str, metric: MetricMeta, scored: list[_Scored], unscored: Mapping[str, int]
) -> MetricWeaknesses:
    by_topic: defaultdict[str, list[_Scored]] = defaultdict(list)
    by_type: defaultdict[str, list[_Scored]] = defaultdict(list)
    grid: defaultdict[str, defaultdict[str, list[_Scored]]] = defaultdict(lambda: defaultdict(list))
    for item in scored:
        by_topic[f"{item.model_key}:{item.topic}"].append(item)
        by_type[f"{item.model_key}:{item.question_type}"].append(item)
        grid[f"{item.model_key}:{item.topic}"][item.question_type].append(item)
    topic_stats = {key: _stat(items) for key, items in sorted(by_topic.items())}
    type_stats = {key: _stat(items) for key, items in sorted(by_type.items())}
    for model_key, count in sorted(unscored.items()):
        if count:
            topic_stats[f"{model_key}:{UNSCORED}"] = type_stats[f"{model_key}:{UNSCORED}"] = GroupStat(
                mean=None, cases=count
            )
    return MetricWeaknesses(
        evaluator_id=evaluator_id,
        metric=metric.key,
        by_topic=topic_stats,
        by_question_type=type_stats,
        grid={
            key: {kind: _stat(items) for kind, items in sorted(cells.items())} for key, cells in sorted(grid.items())
        },
        weakest=_weakest(metric, scored),
    )


def _stat(items: list[_Scored]) -> GroupStat:
    verdicts = [item.passed for item in items if item.passed is not None]
    return GroupStat(
        mean=round(fmean(item.value for item in items), 6),
        cases=len(items),
        pass_rate=round(sum(verdicts) / len(verdicts), 6) if verdicts else None,
    )


def _weakest(metric: MetricMeta, scored: list[_Scored]) -> list[str]:
    """Groups whose mean lies more than one standard deviation on the bad side of their model's mean."""
    found: list[tuple[float, str]] = []
    models = sorted({item.model_key for item in scored})
    for model_key in models:
        items = [item for item in scored if item.model_key == model_key]
        overall = fmean(item.value for item in items)
        spread = pstdev([item.value for item in items])
        if spread == 0:
            continue
        groups: defaultdict[str, list[int]] = defaultdict(list)
        for index, item in enumerate(items):
            groups[f"topic '{item.topic}'"].append(index)
            groups[f"question type '{item.question_type}'"].append(index)
            groups[f"topic '{item.topic}' x type '{item.question_type}'"].append(index)
        prefix = f"model '{model_key}', " if len(models) > 1 else ""
        seen: set[tuple[int, ...]] = set()
        for name, members in groups.items():  # a cell holding the same cases as its topic or type says nothing new
            if len(members) < MIN_WEAK_CASES or tuple(members) in seen:
                continue
            seen.add(tuple(members))
            mean = fmean(items[index].value for index in members)
            gap = overall - mean if metric.higher_is_better else mean - overall
            if gap > spread:
                found.append(
                    (-gap, f"{prefix}{name}: mean {mean:.2f} over {len(members)} cases vs {overall:.2f} overall")
                )
    return [text for _, text in sorted(found)]
