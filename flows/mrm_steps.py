"""The nine steps of the MRM workflow, one function each, as ``flows/mrm.py`` calls them in order.

Each runs inside the workflow's flow run: its work is cached, persisted tasks (``tasks.mrm``), its time is
attributed to it (``WorkflowRun.step``), its documents are exported and stored, its summary shown in the run's
Artifacts tab, and a step that ends in a decision pauses for its reviewer (``flows.review``)."""

from typing import Any

from assay.artifacts import step_summaries as summaries
from assay.flows.mrm_run import WorkflowRun
from assay.flows.review import review_calibration, review_cases, review_clusters, review_topics
from assay.tasks import mrm as steps
from assay.tasks.report import REPORT_FILE, link_report, render_run_report
from assay.tasks.timing import library_seconds
from prefect.utilities.annotations import quote

from assay.models import Chunk, TestLab, TestSuite
from assay.models.evaluation import EvaluationResult
from assay.models.mrm import (
    Calibration,
    Decision,
    FailureClusters,
    ReviewLabel,
    RobustnessReport,
    SuiteValidation,
    TopicModel,
    WeaknessReport,
    WorkflowSummary,
)
from assay.models.steps import Step
from assay.models.thresholds import ThresholdBook
from assay.models.workflow import (
    MIN_LABELS,
    CalibrationParameters,
    RobustnessParameters,
    TestGenerationParameters,
    TestValidationParameters,
    TopicModelingParameters,
)


def topic_modeling(
    run: WorkflowRun, corpus: str | None, parameters: TopicModelingParameters, seed: int
) -> tuple[list[Chunk], TopicModel, Decision]:
    with run.step(Step.TOPIC_MODELING) as counts:
        chunks = steps.load_chunks(corpus, parameters.chunk_words, run.record.fingerprints["corpus"])
        topic_model = steps.topics(quote(chunks), parameters, seed)
        run.publish(Step.TOPIC_MODELING, {"topics.json": topic_model})
        counts.update(chunks=len(chunks), topics=len(topic_model.topics), silhouette=topic_model.silhouette)
        run.show(Step.TOPIC_MODELING, summaries.summarise_topics(topic_model))  # what the reviewer decides on
    decision = review_topics(topic_model, chunks, run.review)
    run.show(Step.TOPIC_MODELING, summaries.summarise_topics(topic_model, decision))
    return chunks, topic_model, decision


def test_generation(
    run: WorkflowRun,
    topic_model: TopicModel,
    chunks: list[Chunk],
    topics_decision: Decision,
    parameters: TestGenerationParameters,
    seed: int,
) -> TestSuite:
    with run.step(Step.TEST_GENERATION) as counts:
        excluded_topics = topics_decision.decision["excluded_topic_ids"]
        suite = steps.generate(quote(topic_model), quote(chunks), excluded_topics, parameters, seed, run.id)
        run.publish(Step.TEST_GENERATION, {"suite.json": suite})
        counts.update(cases=suite.case_count, excluded_topics=len(excluded_topics))
        run.show(Step.TEST_GENERATION, summaries.summarise_generation(suite))
    return suite


def test_validation(
    run: WorkflowRun, suite: TestSuite, chunks: list[Chunk], parameters: TestValidationParameters
) -> tuple[TestSuite, SuiteValidation, Decision]:
    """The suite without the cases the reviewer (or the policy) excluded."""
    with run.step(Step.TEST_VALIDATION) as counts:
        validation = steps.validate(quote(suite), quote(chunks), parameters)
        run.publish(Step.TEST_VALIDATION, {"validation.json": validation})
        run.show(Step.TEST_VALIDATION, summaries.summarise_validation(validation, None, suite))
        decision = review_cases(suite, validation, run.review)
        run.show(Step.TEST_VALIDATION, summaries.summarise_validation(validation, decision, suite))
        kept = steps.exclude(quote(suite), decision.decision["excluded_case_keys"])
        counts.update(
            outliers=sum(case.outlier for case in validation.cases),
            kept=kept.case_count,
            excluded=len(decision.decision["excluded_case_keys"]),
        )
    return kept, validation, decision


def automated_evaluation(
    run: WorkflowRun, suite: TestSuite, evaluators: list[str] | None, name: str
) -> tuple[TestLab, list[EvaluationResult], list[str]]:
    """The hosts' answers, every selected evaluator's results, and the evaluators selected."""
    with run.step(Step.AUTOMATED_EVALUATION) as counts:
        lab, results, selected, skipped = run.evaluate(suite, evaluators, run.id)
        evaluation = run.publish_evaluation(lab, results, skipped, f"{name}-evaluation")
        counts.update(evaluators=selected, skipped=skipped, problems=evaluation["problems"])
        run.show(Step.AUTOMATED_EVALUATION, summaries.summarise_evaluation(lab, results))
    return lab, results, selected


def calibration(
    run: WorkflowRun, lab: TestLab, results: list[EvaluationResult], parameters: CalibrationParameters, seed: int
) -> tuple[Calibration, ThresholdBook, Decision]:
    """The thresholds fitted to a person's labels (none: every threshold stays at its default), and the book
    of the thresholds in force that every later step reads."""
    with run.step(Step.CALIBRATION) as counts:
        items = steps.sample_review(quote(lab), quote(results), parameters.per_metric, seed)
        run.publish(Step.CALIBRATION, {"review_items.json": [item.model_dump(mode="json") for item in items]})
        run.show(Step.CALIBRATION, summaries.summarise_review_sample(items))
        decision = review_calibration(items, run.review, min_labels=MIN_LABELS, per_form=parameters.answers_per_form)
        labels = person_labels(decision)
        not_meaningful = list(decision.decision.get("not_meaningful") or []) if decision.decided_by == "person" else []
        fitted = steps.calibrate(quote(items), quote(labels), quote(results), seed, not_meaningful)
        thresholds = steps.threshold_book(quote(results), quote(fitted), reviewer_of(decision))
        run.publish(
            Step.CALIBRATION,
            {
                "calibration.json": fitted,
                "thresholds.json": thresholds,
                "review_items.json": [item.model_dump(mode="json") for item in items],
                # a person's labels, kept so judges can be aligned with them (assay judges align --labels ...)
                **({"labels.json": [label.model_dump(mode="json") for label in labels]} if labels else {}),
            },
        )
        counts.update(
            labels=len(labels),
            reviewer=thresholds.reviewer,
            labelled=thresholds.labelled,
            recalibrated=sum(entry.source == "calibrated" for entry in thresholds.entries),
        )
        run.show(Step.CALIBRATION, summaries.summarise_calibration(fitted, decision))
    return fitted, thresholds, decision


def failure_clustering(
    run: WorkflowRun, lab: TestLab, results: list[EvaluationResult], thresholds: ThresholdBook, seed: int
) -> tuple[FailureClusters, Decision]:
    """The failures' clusters, named by the reviewer (or by their top keywords)."""
    with run.step(Step.FAILURE_CLUSTERING) as counts:
        found = steps.clusters(quote(lab), quote(results), quote(thresholds), seed)
        run.show(Step.FAILURE_CLUSTERING, summaries.summarise_clusters(found))
        decision = review_clusters(found, run.review)
        named = found.model_copy(
            update={
                "clusters": [
                    c.model_copy(update={"weakness": decision.decision["names"].get(str(c.id), c.weakness)})
                    for c in found.clusters
                ]
            }
        )
        run.publish(Step.FAILURE_CLUSTERING, {"clusters.json": named})
        counts.update(failures=named.failures, clusters=len(named.clusters))
        run.show(Step.FAILURE_CLUSTERING, summaries.summarise_clusters(named, decision))
    return named, decision


def weakness_detection(
    run: WorkflowRun, lab: TestLab, results: list[EvaluationResult], thresholds: ThresholdBook
) -> WeaknessReport:
    with run.step(Step.WEAKNESS_DETECTION) as counts:
        report = steps.weaknesses(quote(lab), quote(results), quote(thresholds))
        run.publish(Step.WEAKNESS_DETECTION, {"weaknesses.json": report})
        counts.update(weak_groups=sum(len(m.weakest) for m in report.metrics))
        run.show(Step.WEAKNESS_DETECTION, summaries.summarise_weaknesses(report))
    return report


def robustness_testing(
    run: WorkflowRun,
    suite: TestSuite,
    evaluators: list[str],
    results: list[EvaluationResult],
    thresholds: ThresholdBook,
    parameters: RobustnessParameters,
    seed: int,
) -> tuple[list[RobustnessReport], list[TestLab]]:
    """Steps 8 and 9: the suite perturbed (input variations, then adversarial inputs), asked again and scored
    by the evaluators of step 4; the verdicts that flipped, and the perturbed labs."""
    reports: list[RobustnessReport] = []
    labs: list[TestLab] = []
    adversarial = parameters.adversarial_perturbators or _by_kind("adversarial")
    for step, kind, chosen in (
        (Step.ROBUSTNESS_INPUT_VARIATIONS, "input_variations", parameters.variation_perturbators),
        (Step.ROBUSTNESS_ADVERSARIAL, "adversarial", adversarial),
    ):
        with run.step(step) as counts:
            run_key = f"{run.id}-{kind}"
            perturbed_suite = steps.perturb(quote(suite), chosen, list(parameters.intensities), seed, run_key)
            perturbed_lab, perturbed_results, _, _ = run.evaluate(perturbed_suite, evaluators, run_key)
            flips = steps.flips(kind, quote(perturbed_lab), quote(perturbed_results), quote(results), quote(thresholds))
            run.publish(
                step, {"test_lab.json": perturbed_lab, "flips.json": [r.model_dump(mode="json") for r in flips]}
            )
            counts.update(
                perturbators=chosen,
                cases=perturbed_suite.case_count,
                flips=sum(c.flips for r in flips for c in r.by_perturbator.values()),
            )
            run.show(step, summaries.summarise_robustness(flips, step))
        reports += flips
        labs.append(perturbed_lab)
    return reports, labs


def compliance_artifacts(run: WorkflowRun, name: str, decisions: list[Decision], *outputs: Any) -> dict[str, Any]:
    """The run's compliance documents from every step's outputs (in workflow order), exported and stored;
    the run marked complete; its report rendered and linked. Returns the workflow summary."""
    summary = workflow_summary(run, decisions)
    library = {"library_s": round(library_seconds(_flow_run_id()), 3)}
    documents = steps.compliance_artifacts(summary, *(quote(output) for output in outputs), library)
    steps.publish_step("artifacts", quote(documents), str(run.out_dir), run.prefix, run.id)
    run.finish()  # every step is done: the report, rendered from the export, must read the run as complete
    report = render_run_report(str(run.out_dir), run.prefix, run.id, "mrm-workflow")
    link_report(f"MRM report {name}", report, f"{run.prefix}/{REPORT_FILE}", run.id)
    return documents["workflow_summary.json"]


def workflow_summary(run: WorkflowRun, decisions: list[Decision]) -> WorkflowSummary:
    """Each step's counts with the seconds its library code computed for, over every attempt."""
    seconds = run.step_seconds()
    return WorkflowSummary(
        run_id=run.id,
        export=str(run.out_dir),
        steps={
            step.value: {"status": "completed", "wall_s": round(seconds.get(step, 0.0), 3), **run.counts.get(step, {})}
            for step in Step
        },
        decisions=decisions,
    )


def person_labels(decision: Decision) -> list[ReviewLabel]:
    """The labels a person gave (in the form or an approvals file); none when nobody reviewed."""
    if decision.decided_by != "person":
        return []
    who = decision.reviewer or reviewer_of(decision)
    chosen = decision.decision
    return [ReviewLabel(item_id=item, human_passes=True, reviewer=who) for item in chosen["passed_item_ids"]] + [
        ReviewLabel(item_id=item, human_passes=False, reviewer=who) for item in chosen["failed_item_ids"]
    ]


def reviewer_of(decision: Decision) -> str:
    """Who labelled, with how: 'ana (prefect-ui)', 'approvals file review.json', or 'no reviewer'."""
    if decision.decided_by != "person":
        return "no reviewer"
    if decision.source == "approvals-file":
        return decision.reviewer or f"approvals file {decision.note.removeprefix('from ')}"
    return f"{decision.reviewer} ({decision.source})"


def _flow_run_id() -> str:
    from prefect.runtime import flow_run

    return str(flow_run.id or "")


def _by_kind(kind: str) -> list[str]:
    from assay.perturbators import get_perturbator, perturbator_ids

    return [pid for pid in perturbator_ids() if get_perturbator(pid).kind == kind]
