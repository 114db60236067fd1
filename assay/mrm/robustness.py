"""Robustness steps (8: input variations, 9: adversarial inputs): perturb the validated cases, answer and
evaluate only the perturbed ones, and count threshold crossings against the step-4 baseline."""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from assay.models import TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import FlipCount, RobustnessReport
from assay.models.suite import Test
from assay.mrm.operational import quality_results
from assay.progress import Progress, report

if TYPE_CHECKING:
    from assay.generation.base import LanguageModel

Thresholds = Mapping[tuple[str, str], float]


def perturbed_only(
    suite: TestSuite,
    perturbators: Sequence[str],
    intensities: Sequence[str],
    seed: int,
    llm: "LanguageModel | None" = None,
    progress: Progress | None = None,
) -> TestSuite:
    """Every case perturbed by every (perturbator, intensity); the originals are left out because their
    answers and scores already exist in the baseline. With ``llm``, contextual misinformation's false
    context is written by the model (offline where it fails). ``progress`` hears the fraction of the
    (perturbator, intensity) pairs done."""
    from assay.perturbators.contextual_misinformation import ContextualMisinformation, with_llm_premises
    from assay.perturbators.suite import perturb_suite

    original_keys = {case.key for _, case in suite.cases()}
    tests: list[Test] = []
    pairs = [(perturbator_id, intensity) for perturbator_id in perturbators for intensity in intensities]
    for done, (perturbator_id, intensity) in enumerate(pairs, start=1):
        perturbed = perturb_suite(suite, perturbator_id, intensity, seed=seed)
        if llm is not None and perturbator_id.lower() == ContextualMisinformation.id:
            perturbed = with_llm_premises(perturbed, llm, intensity)
        for test in perturbed.tests:
            cases = [case for case in test.test_cases if case.key not in original_keys]
            if cases:
                tests.append(
                    test.model_copy(update={"key": f"{test.key}~{perturbator_id}-{intensity}", "test_cases": cases})
                )
        report(progress, done / len(pairs))
    return TestSuite(name=f"{suite.name} (perturbed)", description=suite.description, tests=tests)


def _category_value(categories: Sequence[str], prefix: str) -> str:
    return next((category.split(":", 1)[1] for category in categories if category.startswith(prefix)), "unknown")


def flip_reports(
    kind: str,
    perturbed_lab: TestLab,
    perturbed_results: Sequence[EvaluationResult],
    baseline_results: Sequence[EvaluationResult],
    thresholds: Thresholds | None = None,
) -> list[RobustnessReport]:
    """Per evaluator (primary metric): flips of each perturbed case relative to its original, by
    perturbator, topic and generator. Cases unscored on either side are not counted as flips, nor are
    operational metrics (a latency crossing its threshold says nothing about robustness to the input)."""
    baseline = {result.evaluator.id: result for result in baseline_results}
    rows = {(row.model_key, row.test_case.key): row for row in perturbed_lab.rows}
    reports = []
    for result in quality_results(perturbed_results):
        spec = result.evaluator
        metric = spec.primary_metric
        original = baseline.get(spec.id)
        if original is None:
            continue
        threshold = result.threshold(metric.key, thresholds)
        if threshold is None:
            continue
        original_scores = {(row.model_key, row.test_case_key): row.scores.get(metric.key) for row in original.rows}
        counters: dict[str, dict[str, Counter]] = {"perturbator": {}, "topic": {}, "generator": {}}
        flipped: list[str] = []
        for scored in result.rows:
            row = rows[scored.model_key, scored.test_case_key]
            case = row.test_case
            before = original_scores.get((scored.model_key, case.perturbation_of or ""))
            after = scored.scores.get(metric.key)
            if before is None or after is None:
                continue
            passed_before, passed_after = metric.passes(before, threshold), metric.passes(after, threshold)
            groups = {
                "perturbator": _category_value(case.categories, "perturbator:"),
                "topic": case.topic or "unknown",
                "generator": case.generator or "unknown",
            }
            for dimension, group in groups.items():
                counter = counters[dimension].setdefault(group, Counter())
                counter["cases"] += 1
                if passed_before != passed_after:
                    counter["flips"] += 1
                    counter["pass_to_fail" if passed_before else "fail_to_pass"] += 1
            if passed_before != passed_after:
                flipped.append(f"{scored.model_key}:{case.key}")
        reports.append(
            RobustnessReport(
                kind=kind,  # type: ignore[arg-type]
                evaluator_id=spec.id,
                metric=metric.key,
                by_perturbator=_counts(counters["perturbator"]),
                by_topic=_counts(counters["topic"]),
                by_generator=_counts(counters["generator"]),
                flipped_row_keys=flipped,
            )
        )
    return reports


def _counts(groups: dict[str, Counter]) -> dict[str, FlipCount]:
    return {
        group: FlipCount(
            cases=c["cases"], flips=c["flips"], pass_to_fail=c["pass_to_fail"], fail_to_pass=c["fail_to_pass"]
        )
        for group, c in sorted(groups.items())
    }
