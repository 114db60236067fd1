"""What the MRM workflow emits at the end: the compliance artifacts (corpus patch, system-prompt extension,
guardrail configuration), the workflow summary and the report data, as documents for ``publish_documents``.
Every verdict in them is taken at the run's threshold book. Pure builder, no I/O."""

from collections.abc import Sequence
from typing import Any

from assay.artifacts.corpus_patch import build_corpus_patch
from assay.artifacts.findings import find_insights, find_problems
from assay.artifacts.guardrails import build_guardrail_config
from assay.artifacts.prompt_extension import build_prompt_extension
from assay.artifacts.workflow_report import build_workflow_report

from assay.models import TestLab
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import (
    Calibration,
    FailureClusters,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
    WorkflowSummary,
)
from assay.models.thresholds import ThresholdBook

ACTIONABLE = ("artifacts/corpus_patch.md", "artifacts/system_prompt_extension.md", "artifacts/guardrails.json")


def mrm_documents(
    summary: WorkflowSummary,
    *,
    topic_model: TopicModel,
    validation: SuiteValidation,
    lab: TestLab,
    results: Sequence[EvaluationResult],
    calibration: Calibration,
    thresholds: ThresholdBook,
    clusters: FailureClusters,
    weaknesses: WeaknessReport,
    robustness: Sequence[RobustnessReport],
    perturbed_labs: Sequence[TestLab],
    timing: dict[str, Any],
) -> dict[str, Any]:
    in_force = thresholds.in_force()
    # A metric the reviewer marked not meaningful for this system leaves the verdict (its results stay published).
    judged = [result for result in results if result.evaluator.id not in thresholds.left_out()]
    problems = find_problems(lab, judged, in_force)
    insights = find_insights(lab, judged, in_force)
    patch = build_corpus_patch(
        lab, calibration, robustness, run_id=summary.run_id, results=results, perturbed_labs=perturbed_labs
    )
    extension = build_prompt_extension(weaknesses, clusters, robustness, problems)
    report = build_workflow_report(
        summary,
        topics=topic_model,
        validation=validation,
        lab=lab,
        results=results,
        problems=problems,
        insights=insights,
        calibration=calibration,
        clusters=clusters,
        weaknesses=weaknesses,
        robustness=robustness,
        decisions=summary.decisions,
        thresholds=thresholds,
        actionable_artifacts=ACTIONABLE,
    )
    return {
        "artifacts/corpus_patch.md": patch.markdown(),
        "artifacts/corpus_patch.json": patch.model_dump(mode="json"),
        "artifacts/system_prompt_extension.md": extension.text(),
        "artifacts/system_prompt_extension.json": extension.model_dump(mode="json"),
        "artifacts/guardrails.json": build_guardrail_config(thresholds, calibration=calibration, run_id=summary.run_id),
        "report.json": report,
        "workflow_summary.json": {**summary.model_dump(mode="json"), "timing": timing},
    }
