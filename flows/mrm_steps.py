"""What the MRM flow shows reviewers and what it emits at the end (kept out of flows/mrm.py so the flow
reads like the workflow's table of contents)."""

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from artifacts.corpus_patch import build_corpus_patch
from artifacts.findings import find_insights, find_problems
from artifacts.guardrails import build_guardrail_config
from artifacts.prompt_extension import build_prompt_extension
from artifacts.workflow_report import build_workflow_report
from assay.escaping import for_markdown_cell, for_markdown_text
from assay.models import TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import (
    Calibration,
    FailureClusters,
    ReviewItem,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
    WorkflowSummary,
)


def _cell(text: object, limit: int = 90) -> str:
    """A table cell of the review form (rendered as Markdown in the Prefect UI): questions, answers and
    keywords come from files and models, so they are shortened, then escaped."""
    text = " ".join(str(text).split())
    return for_markdown_cell(text if len(text) <= limit else text[: limit - 1] + "…")


def _topics(topic_model: TopicModel) -> str:
    rows = [
        f"| {t.id} | {_cell(t.label, 40)} | {_cell(', '.join(t.keywords[:8]))} | {len(t.chunk_refs)} |"
        for t in topic_model.topics
    ]
    return "\n".join(
        [
            "### Topics found in the corpus",
            "List the ids of topics to leave out of test generation in **excluded_topic_ids**.",
            "",
            "| id | label | keywords | chunks |",
            "|---|---|---|---|",
            *rows,
        ]
    )


def _cases(suite: TestSuite, validation: SuiteValidation) -> str:
    checks = {case.test_case_key: case for case in validation.cases}
    rows = []
    for _, case in suite.cases():
        check = checks.get(case.key)
        flag = "; ".join(check.reasons) if check and check.outlier else ""
        cosine = "" if check is None or check.cosine is None else f"{check.cosine:.2f}"
        rows.append(
            f"| {for_markdown_cell(case.key)} | {_cell(case.prompt, 70)} | {_cell(case.generator or '', 20)} | "
            f"{cosine} | {_cell(flag, 60)} |"
        )
    return "\n".join(
        [
            "### Generated test cases",
            "Flagged outliers are pre-filled in **excluded_case_keys**; edit the list to keep or drop cases.",
            "",
            "| key | question | generator | cosine | flagged |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def _calibration(items: Sequence[ReviewItem]) -> str:
    rows = [
        f"| {for_markdown_cell(item.item_id)} | {_cell(item.question, 50)} | {_cell(item.actual_output, 70)} | "
        f"{_cell(item.expected_output, 50)} | {item.score:.3f} | {'pass' if item.metric_passes else 'fail'} |"
        for item in items
    ]
    return "\n".join(
        [
            "### Do you agree with the metric?",
            "Put the ids of answers you judge acceptable in **passed_item_ids** and unacceptable ones in "
            "**failed_item_ids**.",
            "",
            "| item id | question | actual answer | expected answer | score | metric says |",
            "|---|---|---|---|---|---|",
            *rows,
        ]
    )


def _clusters(clusters: FailureClusters) -> str:
    if not clusters.clusters:
        return f"### Failure clusters\n{for_markdown_text(clusters.message or 'No clusters.')}"
    rows = [
        f"| {c.id} | {c.size} | {_cell(', '.join(c.keywords[:6]))} | "
        f"{_cell(c.example_questions[0] if c.example_questions else '', 70)} |"
        for c in clusters.clusters
    ]
    return "\n".join(
        [
            "### Failure clusters",
            "Name the weakness each cluster shows in **names** (cluster id -> name).",
            "",
            "| id | failures | keywords | example question |",
            "|---|---|---|---|",
            *rows,
        ]
    )


review_text = SimpleNamespace(topics=_topics, cases=_cases, calibration=_calibration, clusters=_clusters)


def artifacts_documents(
    summary: WorkflowSummary,
    *,
    topic_model: TopicModel,
    validation: SuiteValidation,
    lab: TestLab,
    results: Sequence[EvaluationResult],
    calibration: Calibration,
    clusters: FailureClusters,
    weaknesses: WeaknessReport,
    robustness: Sequence[RobustnessReport],
    perturbed_labs: Sequence[TestLab],
    timing: dict[str, Any],
) -> dict[str, Any]:
    """The compliance artifacts (corpus patch, system-prompt extension, guardrail configuration) and the
    workflow summary and report data, as documents for ``publish_documents``."""
    problems = find_problems(lab, results)
    insights = find_insights(lab, results)
    patch = build_corpus_patch(
        lab, calibration, robustness, run_id=summary.run_id, results=results, perturbed_labs=perturbed_labs
    )
    extension = build_prompt_extension(weaknesses, clusters, robustness, problems)
    guardrails = build_guardrail_config(calibration, results)
    summary_document = {**summary.model_dump(mode="json"), "timing": timing}
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
        actionable_artifacts=[
            "artifacts/corpus_patch.md",
            "artifacts/system_prompt_extension.md",
            "artifacts/guardrails.json",
        ],
    )
    return {
        "artifacts/corpus_patch.md": patch.markdown(),
        "artifacts/corpus_patch.json": patch.model_dump(mode="json"),
        "artifacts/system_prompt_extension.md": extension.text(),
        "artifacts/system_prompt_extension.json": extension.model_dump(mode="json"),
        "artifacts/guardrails.json": guardrails,
        "report.json": report,
        "workflow_summary.json": summary_document,
    }
