"""The MRM workflow report data (seed 002 "Workflow report": the steps evaluated, the results, the defects
found): a JSON-ready dict that the reporting code renders. One section per step, in workflow order, with its
status, key numbers, the decisions taken and who took them (a person or the policy), plus the threshold book
(every threshold with who or what set it), so an auditor can tell what was judged by people. A step whose
output is missing is reported as not run, never silently left out.
Pure builder, no I/O."""

from collections import Counter
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from assay.artifacts.findings import leaderboard

from assay.models import TestLab
from assay.models.base import SCHEMA_VERSION
from assay.models.evaluation import EvaluationResult
from assay.models.findings import Insight, Problem
from assay.models.mrm import (
    Calibration,
    Decision,
    FailureClusters,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
    WorkflowSummary,
)
from assay.models.steps import Step, step_title
from assay.models.thresholds import ThresholdBook

Numbers = tuple[dict[str, Any], dict[str, Any]]
"""A step's key numbers (scalars) and details (lists and tables)."""


def build_workflow_report(
    summary: WorkflowSummary,
    *,
    topics: TopicModel | None = None,
    validation: SuiteValidation | None = None,
    lab: TestLab | None = None,
    results: Sequence[EvaluationResult] | None = None,
    problems: Sequence[Problem] | None = None,
    insights: Sequence[Insight] | None = None,
    calibration: Calibration | None = None,
    clusters: FailureClusters | None = None,
    weaknesses: WeaknessReport | None = None,
    robustness: Sequence[RobustnessReport] | None = None,
    decisions: Sequence[Decision] | None = None,
    thresholds: ThresholdBook | None = None,
    actionable_artifacts: Sequence[str] = (),
) -> dict[str, Any]:
    """``decisions`` defaults to the summary's; ``thresholds`` is the run's threshold book (the thresholds every
    verdict of the report was taken at, with their provenance); ``actionable_artifacts`` names the corpus
    patch, prompt extension and guardrail files published with the report."""
    taken = list(summary.decisions if decisions is None else decisions)
    outputs: dict[str, Callable[[], Numbers] | None] = {
        Step.TOPIC_MODELING: None if topics is None else lambda: topic_numbers(topics),
        Step.TEST_GENERATION: None if lab is None else lambda: _generation(lab),
        Step.TEST_VALIDATION: None if validation is None else lambda: validation_numbers(validation),
        Step.AUTOMATED_EVALUATION: None if results is None else lambda: _evaluation(lab, results, problems, insights),
        Step.CALIBRATION: None if calibration is None else lambda: calibration_numbers(calibration),
        Step.FAILURE_CLUSTERING: None if clusters is None else lambda: cluster_numbers(clusters),
        Step.WEAKNESS_DETECTION: None if weaknesses is None else lambda: _weaknesses(weaknesses),
        Step.ROBUSTNESS_INPUT_VARIATIONS: (
            None if robustness is None else lambda: robustness_numbers(robustness, "input_variations")
        ),
        Step.ROBUSTNESS_ADVERSARIAL: (
            None if robustness is None else lambda: robustness_numbers(robustness, "adversarial")
        ),
    }
    steps = list(dict.fromkeys([*Step, *summary.steps, *(decision.step for decision in taken)]))
    sections = [_section(step, summary.steps.get(step, {}), outputs.get(step), taken) for step in steps]
    step_artifacts = [name for section in sections for name in section["artifacts"]]
    in_force = thresholds.in_force() if thresholds else None
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": summary.run_id,
        "steps": sections,
        "thresholds": thresholds.model_dump(mode="json", exclude={"schema_version"}) if thresholds else None,
        "leaderboards": [leaderboard(lab, r, thresholds=in_force) for r in results] if lab and results else [],
        "problems": _findings(problems, by_severity=True),
        "insights": _findings(insights),
        "artifacts": list(dict.fromkeys([*step_artifacts, *actionable_artifacts])),
    }


def _section(
    step: str, recorded: dict[str, Any], output: Callable[[], Numbers] | None, decisions: Sequence[Decision]
) -> dict[str, Any]:
    recorded_status = recorded.get("status")
    if output is None:
        status = recorded_status if recorded_status not in (None, "completed") else "not run"
        numbers, details = {}, {}
    else:
        status = recorded_status or "completed"
        numbers, details = output()
    own = [decision for decision in decisions if decision.step == step]
    who = {decision.decided_by for decision in own}
    return {
        "step": step,
        "title": step_title(step),
        "status": status,
        "message": "" if output else f"{step_title(step)} did not run: the report has no output of it.",
        "wall_s": recorded.get("wall_s"),
        "numbers": numbers,
        "details": details,
        "decided_by": None if not who else who.pop() if len(who) == 1 else "mixed",
        "decisions": [decision.model_dump(mode="json", exclude={"step"}, exclude_defaults=True) for decision in own],
        "artifacts": list(recorded.get("artifacts", [])),
        "recorded": {key: value for key, value in recorded.items() if key not in ("status", "wall_s", "artifacts")},
    }


def topic_numbers(model: TopicModel) -> Numbers:
    numbers = {
        "topics": len(model.topics),
        "chunks": sum(len(topic.chunk_refs) for topic in model.topics) + len(model.outlier_chunk_refs),
        "outlier_chunks": len(model.outlier_chunk_refs),
        "silhouette": model.silhouette,
        "configurations_tried": len(model.grid),
    }
    details = {
        "config": model.config,
        "topics": [
            {"id": t.id, "label": t.label, "keywords": t.keywords, "chunks": len(t.chunk_refs)} for t in model.topics
        ],
    }
    return numbers, details


def _generation(lab: TestLab) -> Numbers:
    """The evaluated cases (after the validation step's exclusions), by generator and topic."""
    cases = {row.test_case.key: row.test_case for row in lab.rows}.values()
    details = {
        "by_generator": dict(sorted(Counter(case.generator or "unknown" for case in cases).items())),
        "by_topic": dict(sorted(Counter(case.topic or "unknown" for case in cases).items())),
    }
    return {"cases": len(cases)}, details


def validation_numbers(validation: SuiteValidation) -> Numbers:
    cosines = [case.cosine for case in validation.cases if case.cosine is not None]
    outliers = [case for case in validation.cases if case.outlier]
    numbers = {
        "cases": len(validation.cases),
        "outliers": len(outliers),
        "mean_cosine": round(fmean(cosines), 6) if cosines else None,
        "nli_status": validation.nli_status,
        "bertscore_status": validation.bertscore_status,
    }
    details = {
        "thresholds": validation.thresholds,
        "outliers": [{"test_case_key": case.test_case_key, "reasons": case.reasons} for case in outliers],
    }
    return numbers, details


def _evaluation(
    lab: TestLab | None,
    results: Sequence[EvaluationResult],
    problems: Sequence[Problem] | None,
    insights: Sequence[Insight] | None,
) -> Numbers:
    numbers: dict[str, Any] = {
        "evaluators": len(results),
        "problems": None if problems is None else len(problems),
        "insights": None if insights is None else len(insights),
    }
    if lab is not None:
        answered = sum(row.answered for row in lab.rows)
        numbers |= {"models": len(lab.models), "rows": len(lab.rows), "answered": answered}
        numbers["host_errors"] = len(lab.rows) - answered
    details = {
        "evaluators": [result.evaluator.id for result in results],
        "models": [model.key for model in lab.models] if lab else [],
    }
    return numbers, details


def calibration_numbers(calibration: Calibration) -> Numbers:
    numbers = {
        "rounds": calibration.rounds,
        "decided_by": calibration.decided_by,
        "metrics": len(calibration.metrics),
        "calibrated": sum(item.calibrated_threshold is not None for item in calibration.metrics),
        "labels": sum(item.labels for item in calibration.metrics),
        "human_passed_failures": len(calibration.human_passed_failures),
    }
    return numbers, {"metrics": [item.model_dump(mode="json") for item in calibration.metrics]}


def cluster_numbers(clusters: FailureClusters) -> Numbers:
    numbers = {"failures": clusters.failures, "clusters": len(clusters.clusters), "message": clusters.message}
    details = {
        "clusters": [
            {
                "id": cluster.id,
                "size": cluster.size,
                "weakness": cluster.weakness,
                "keywords": cluster.keywords,
                "example_questions": cluster.example_questions[:3],
            }
            for cluster in clusters.clusters
        ]
    }
    return numbers, details


def _weaknesses(report: WeaknessReport) -> Numbers:
    numbers = {"metrics": len(report.metrics), "weak_groups": sum(len(m.weakest) for m in report.metrics)}
    details = {
        "weakest": [{"evaluator_id": m.evaluator_id, "metric": m.metric, "groups": m.weakest} for m in report.metrics]
    }
    return numbers, details


def robustness_numbers(reports: Sequence[RobustnessReport], kind: str) -> Numbers:
    """Every perturbed case is counted once per report, under its perturbator."""
    chosen = [report for report in reports if report.kind == kind]
    per_report = [
        {
            "evaluator_id": report.evaluator_id,
            "metric": report.metric,
            "cases": sum(count.cases for count in report.by_perturbator.values()),
            "flips": sum(count.flips for count in report.by_perturbator.values()),
            "by_perturbator": {name: count.model_dump() for name, count in report.by_perturbator.items()},
        }
        for report in chosen
    ]
    numbers = {
        "reports": len(chosen),
        "cases": sum(item["cases"] for item in per_report),
        "flips": sum(item["flips"] for item in per_report),
    }
    return numbers, {"by_evaluator": per_report}


def _findings(findings: Sequence[Problem] | Sequence[Insight] | None, *, by_severity: bool = False) -> dict[str, Any]:
    """``available`` tells "no findings" apart from "findings not computed"."""
    items = [finding.model_dump(mode="json") for finding in findings or []]
    summary: dict[str, Any] = {"available": findings is not None, "count": len(items), "items": items}
    if by_severity:
        counts = Counter(item["severity"] for item in items)
        summary["by_severity"] = {severity: counts[severity] for severity in ("high", "medium", "low")}
    return summary
