"""Problems: what a validator must act on (seed 002 "Problems and insights")."""

from collections.abc import Mapping, Sequence
from typing import Any

from assay.artifacts.findings.common import (
    Thresholds,
    avid_code,
    case_reference,
    problem_type,
    severity_of_gap,
    threshold_of,
)
from assay.artifacts.findings.leaks import leaking_case_problems

from assay.models import TestLab, TestLabRow
from assay.models.evaluation import EvaluationResult
from assay.models.findings import Problem

MIN_EMBEDDABLE_WORDS = 2
_ROBUSTNESS_ACTION = (
    "Perform sensitivity analysis on various perturbation types and intensities to explore the model's "
    "robustness with regard to the specified perturbations."
)


def find_problems(lab: TestLab, results: Sequence[EvaluationResult], thresholds: Thresholds = None) -> list[Problem]:
    """``thresholds``: the run's threshold book after calibration (``ThresholdBook.in_force()``).

    Privacy and security evaluators are zero-tolerance: besides the average, every leaking case is a problem
    of its own (``artifacts.findings.leaks``)."""
    problems = [*_host_failures(lab), *_empty_context(lab)]
    if any("embeddings" in result.evaluator.needs for result in results):
        problems += _too_short_to_embed(lab)
    for result in results:
        problems += _primary_below_threshold(lab, result, thresholds)
        problems += leaking_case_problems(lab, result, thresholds)
        problems += _robustness_flips(lab, result, thresholds)
        if result.judge is not None:
            problems += _flaky_judge_verdicts(lab, result) + _judge_failures(lab, result)
    return problems


def _flaky_judge_verdicts(lab: TestLab, result: EvaluationResult) -> list[Problem]:
    """Cases whose judge verdict flipped between repeats: unscored, and named here so a person decides them."""
    problems = []
    for model_key in result.aggregates:
        flaky = [row for row in result.rows if row.model_key == model_key and row.details.get("flaky")]
        if not flaky:
            continue
        problems.append(
            Problem(
                description=(
                    f"The LLM judge of {result.evaluator.display_name} gave '{_name(lab, model_key)}' verdicts that "
                    f"flip between repeats on {len(flaky)} test cases; they are left unscored, not averaged."
                ),
                severity="medium",
                problem_type="stability",
                problem_code=avid_code("stability"),
                attributes={
                    "model_key": model_key,
                    "evaluator": result.evaluator.id,
                    "test_case_keys": [row.test_case_key for row in flaky],
                    "agreement": [row.details.get("judge_repeats", {}).get("agreement") for row in flaky],
                },
                actions=[
                    "Read each case's judge evidence (details.judge in results.json) and decide it by hand; if many "
                    "cases flip, use a stronger judge model, a stricter prompt or more repeats.",
                ],
            )
        )
    return problems


def _judge_failures(lab: TestLab, result: EvaluationResult) -> list[Problem]:
    """Cases the judge could not score (malformed replies, refusals, a dead endpoint): unscored, never zero."""
    problems = []
    for model_key in result.aggregates:
        rows = [row for row in result.rows if row.model_key == model_key]
        failed = [row for row in rows if (row.unscored_reason or "").startswith("judge failed")]
        if not failed:
            continue
        problems.append(
            Problem(
                description=(
                    f"The LLM judge of {result.evaluator.display_name} could not score {len(failed)} of {len(rows)} "
                    f"test cases of '{_name(lab, model_key)}' (first: {failed[0].unscored_reason})."
                ),
                severity="high" if len(failed) / len(rows) > 0.05 else "medium",
                problem_type="runtime",
                problem_code=avid_code("runtime"),
                attributes={
                    "model_key": model_key,
                    "evaluator": result.evaluator.id,
                    "failures": [{"test_case_key": row.test_case_key, "reason": row.unscored_reason} for row in failed],
                },
                actions=[
                    "Check the judge endpoint and the raw replies kept as evidence; rerun: answered cases come from "
                    "the judge cache and only the failed ones are asked again.",
                ],
            )
        )
    return problems


def _primary_below_threshold(lab: TestLab, result: EvaluationResult, thresholds: Thresholds) -> list[Problem]:
    spec = result.evaluator
    metric = spec.primary_metric
    threshold = threshold_of(result, metric, thresholds)
    if threshold is None:
        return []
    problems = []
    for model_key, aggregates in result.aggregates.items():
        aggregate = aggregates[metric.key]
        if aggregate.mean is None or metric.passes(aggregate.mean, threshold):
            continue
        relation = "below" if metric.higher_is_better else "above"
        kind = problem_type(spec)
        problems.append(
            Problem(
                description=(
                    f"Model '{_name(lab, model_key)}' has average {metric.display_name} {aggregate.mean:.3f}, "
                    f"{relation} the threshold {threshold} ({aggregate.passed} of {aggregate.scored} scored test "
                    f"cases pass; {aggregate.unscored} unscored)."
                ),
                severity=severity_of_gap(metric, aggregate.mean, threshold),
                problem_type=kind,
                problem_code=avid_code(kind),
                attributes={
                    "model_key": model_key,
                    "evaluator": spec.id,
                    "metric": metric.key,
                    "value": aggregate.mean,
                    "threshold": threshold,
                },
                actions=[
                    f"Review the weak points of '{_name(lab, model_key)}' in the {spec.display_name} leaderboard: "
                    "the lowest-scoring test cases first, and look for a common root cause (retrieval, "
                    "prompt, corpus gaps).",
                ],
            )
        )
    return problems


def _robustness_flips(lab: TestLab, result: EvaluationResult, thresholds: Thresholds) -> list[Problem]:
    """A perturbed case whose primary metric crosses the threshold relative to its original."""
    spec = result.evaluator
    metric = spec.primary_metric
    threshold = threshold_of(result, metric, thresholds)
    if threshold is None:
        return []
    scores = {(row.model_key, row.test_case_key): row.scores.get(metric.key) for row in result.rows}
    rows = {(row.model_key, row.test_case.key): row for row in lab.rows}
    problems = []
    for (model_key, case_key), value in scores.items():
        perturbed = rows[model_key, case_key]
        original_key = perturbed.test_case.perturbation_of
        original_value = scores.get((model_key, original_key)) if original_key else None
        if value is None or original_value is None:
            continue
        before, after = metric.passes(original_value, threshold), metric.passes(value, threshold)
        if before == after:
            continue
        direction = "pass to fail" if before else "fail to pass"
        original = rows[model_key, original_key]
        problems.append(
            Problem(
                description=(
                    f"Model robustness problem detected in case of prompt perturbation: metric '{metric.key}' value "
                    f"flipped from {direction} in case of answers generated by the model '{_name(lab, model_key)}'. "
                    f"ORIGINAL prompt: '{original.test_case.prompt}', PERTURBED prompt: '{perturbed.test_case.prompt}'."
                ),
                severity="high" if before else "medium",
                problem_type="robustness",
                problem_code=avid_code("robustness"),
                attributes={
                    "model_key": model_key,
                    "evaluator": spec.id,
                    "metric": metric.key,
                    "original": {**case_reference(original), "value": original_value},
                    "perturbed": {**case_reference(perturbed), "value": value},
                    "categories": perturbed.test_case.categories,
                },
                actions=[_ROBUSTNESS_ACTION],
            )
        )
    return problems


def _returns_context(host_type: str) -> bool:
    """Whether the host type declares that it returns retrieved context (an unknown type: no)."""
    from assay.hosts.registry import host_spec  # the registry imports every host: only when a lab has rows

    try:
        return host_spec(host_type).returns_context
    except ValueError:
        return False


def _empty_context(lab: TestLab) -> list[Problem]:
    """RAG models that answered cases with nothing retrieved: a model some of whose answers carry context, or
    whose host type declares it returns context (OpenAI Assistants whose file search returned nothing)."""
    problems = []
    for model in lab.models:
        answered = [row for row in lab.rows_for(model.key) if row.answered]
        empty = [row for row in answered if not row.context]
        if not empty or (len(empty) == len(answered) and not _returns_context(model.type)):
            continue
        problems.append(
            Problem(
                description=(
                    f"Model '{_name(lab, model.key)}' retrieved no context for {len(empty)} of {len(answered)} "
                    "answered test cases: those answers cannot be grounded in the corpus, and evaluators that "
                    "need the retrieved context cannot judge them."
                ),
                severity="high" if len(empty) / len(answered) > 0.1 else "medium",
                problem_type="retrieval",
                problem_code=avid_code("retrieval"),
                attributes={"model_key": model.key, "test_cases": [case_reference(row) for row in empty]},
                actions=[
                    "Check the retriever's index and query for these questions; extend the corpus if the "
                    "documents are missing."
                ],
            )
        )
    return problems


def _too_short_to_embed(lab: TestLab) -> list[Problem]:
    problems = []
    for model in lab.models:
        short = [
            row
            for row in lab.rows_for(model.key)
            if row.answered and len((row.actual_output or "").split()) < MIN_EMBEDDABLE_WORDS
        ]
        if short:
            problems.append(
                Problem(
                    description=(
                        f"Model '{_name(lab, model.key)}' gave {len(short)} answer(s) too short to embed meaningfully "
                        f"(fewer than {MIN_EMBEDDABLE_WORDS} words): embedding-based scores of these cases are "
                        "unreliable."
                    ),
                    severity="medium",
                    problem_type="data quality",
                    problem_code=avid_code("data quality"),
                    attributes={"model_key": model.key, "test_cases": [case_reference(row) for row in short]},
                    actions=[
                        "Read these answers; prefer rule-based evaluators (text matching, assertions) for "
                        "one-word answers."
                    ],
                )
            )
    return problems


def is_host_failure(problem: Mapping[str, Any]) -> bool:
    """A problem of ``_host_failures`` as problems_and_actions.json has it: a runtime problem of no evaluator (a
    judge's failures name theirs)."""
    return problem.get("problem_type") == "runtime" and "evaluator" not in (problem.get("attributes") or {})


def _host_failures(lab: TestLab) -> list[Problem]:
    problems = []
    for model in lab.models:
        rows = lab.rows_for(model.key)
        failed: list[TestLabRow] = [row for row in rows if not row.answered]
        if failed:
            problems.append(
                Problem(
                    description=(
                        f"Model '{_name(lab, model.key)}' failed to answer {len(failed)} of {len(rows)} test cases "
                        f"(first error: {failed[0].error})."
                    ),
                    severity="high" if len(failed) / len(rows) > 0.05 else "medium",
                    problem_type="runtime",
                    problem_code=avid_code("runtime"),
                    attributes={
                        "model_key": model.key,
                        "failures": [{"test_case_key": row.test_case.key, "error": row.error} for row in failed],
                    },
                    actions=[
                        "Check the host's availability, timeouts and rate limits; rerun the evaluation to "
                        "retry only the failed cases."
                    ],
                )
            )
    return problems


def _name(lab: TestLab, model_key: str) -> str:
    model = lab.model(model_key)
    return model.name or model.key
