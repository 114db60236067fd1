"""The MRM workflow (seed 002 "Model Risk Management"): nine steps with human approval pauses.

Each step's work is a cached, persisted task (its time kept per attempt in the run's state, ``tasks.timing``);
its documents are exported under ``<out>/<step>/`` and stored as versioned artifacts ``mrm/<name>/<step>/``.
The run's state and decisions live in the object store: killing the run and rerunning it resumes after the
last finished step with the decisions already taken, and the host is never asked again for an answered case.
"""

from typing import Any

from assay.artifacts import step_summaries as summaries
from assay.flows.mrm_run import WorkflowRun
from assay.flows.review import review_calibration, review_cases, review_clusters, review_topics
from assay.tasks import mrm as steps
from assay.tasks.report import REPORT_FILE, link_report, render_run_report
from assay.tasks.timing import library_seconds
from prefect import flow
from prefect.utilities.annotations import quote

from assay.models.mrm import Decision, ReviewLabel, WorkflowSummary
from assay.models.steps import Step
from assay.models.workflow import (
    CalibrationParameters,
    MrmParameters,
    RobustnessParameters,
    TestGenerationParameters,
    TestValidationParameters,
    TopicModelingParameters,
)

MIN_LABELS = 6
"""Labels a primary metric needs before its threshold is refitted (``fit_thresholds``' ``min_labels``)."""


@flow(name="mrm-workflow", log_prints=True, persist_result=False)
def mrm_workflow(
    corpus: str | None = None,
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[str] | None = None,
    out: str | None = None,
    name: str = "mrm",
    seed: int = 0,
    interactive: bool = True,
    approvals: str | None = None,
    topic_modeling: TopicModelingParameters = TopicModelingParameters(),  # noqa: B008 - pydantic defaults
    test_generation: TestGenerationParameters = TestGenerationParameters(),  # noqa: B008
    test_validation: TestValidationParameters = TestValidationParameters(),  # noqa: B008
    calibration: CalibrationParameters = CalibrationParameters(),  # noqa: B008
    robustness: RobustnessParameters = RobustnessParameters(),  # noqa: B008
    run_id: str | None = None,
) -> dict[str, Any]:
    """Validate a RAG system end to end: topics -> tests -> validation -> evaluation -> calibration ->
    failure clusters -> weaknesses -> robustness (variations, adversarial) -> compliance artifacts.

    ``corpus``: folder of .md/.txt documents (default: the sample corpus); ``hosts``: host types or host
    files (default: sample-rag); ``evaluators``: default every non-LLM evaluator the lab has inputs for;
    ``out``: export folder (``{run_id}`` in it becomes the run id; default ``<assay home>/exports/<run id>``);
    ``interactive``: pause for reviewers in the Prefect UI, else decide from ``approvals`` (a JSON file) and
    the steps' policies."""
    parameters = MrmParameters(
        topic_modeling=topic_modeling,
        test_generation=test_generation,
        test_validation=test_validation,
        calibration=calibration,
        robustness=robustness,
    )
    run = WorkflowRun.open(
        corpus=corpus,
        hosts=hosts,
        evaluators=evaluators,
        out=out,
        name=name,
        seed=seed,
        interactive=interactive,
        approvals=approvals,
        parameters=parameters,
        run_id=run_id,
    )

    with run.step(Step.TOPIC_MODELING) as counts:
        chunks = steps.load_chunks(corpus, topic_modeling.chunk_words, run.record.fingerprints["corpus"])
        topic_model = steps.topics(quote(chunks), topic_modeling, seed)
        run.publish(Step.TOPIC_MODELING, {"topics.json": topic_model})
        counts.update(chunks=len(chunks), topics=len(topic_model.topics), silhouette=topic_model.silhouette)
        run.show(Step.TOPIC_MODELING, summaries.summarise_topics(topic_model))  # what the reviewer decides on
    topics_decision = review_topics(topic_model, chunks, run.review)
    run.show(Step.TOPIC_MODELING, summaries.summarise_topics(topic_model, topics_decision))

    with run.step(Step.TEST_GENERATION) as counts:
        excluded_topics = topics_decision.decision["excluded_topic_ids"]
        suite = steps.generate(quote(topic_model), quote(chunks), excluded_topics, test_generation, seed, run.id)
        run.publish(Step.TEST_GENERATION, {"suite.json": suite})
        counts.update(cases=suite.case_count, excluded_topics=len(excluded_topics))
        run.show(Step.TEST_GENERATION, summaries.summarise_generation(suite))

    with run.step(Step.TEST_VALIDATION) as counts:
        validation = steps.validate(quote(suite), quote(chunks), test_validation)
        run.publish(Step.TEST_VALIDATION, {"validation.json": validation})
        run.show(Step.TEST_VALIDATION, summaries.summarise_validation(validation, None, suite))
        cases_decision = review_cases(suite, validation, run.review)
        run.show(Step.TEST_VALIDATION, summaries.summarise_validation(validation, cases_decision, suite))
        suite = steps.exclude(quote(suite), cases_decision.decision["excluded_case_keys"])
        counts.update(
            outliers=sum(case.outlier for case in validation.cases),
            kept=suite.case_count,
            excluded=len(cases_decision.decision["excluded_case_keys"]),
        )

    with run.step(Step.AUTOMATED_EVALUATION) as counts:
        lab, results, selected, skipped = run.evaluate(suite, evaluators, run.id)
        evaluation = run.publish_evaluation(lab, results, skipped, f"{name}-evaluation")
        counts.update(evaluators=selected, skipped=skipped, problems=evaluation["problems"])
        run.show(Step.AUTOMATED_EVALUATION, summaries.summarise_evaluation(lab, results))

    with run.step(Step.CALIBRATION) as counts:
        items = steps.sample_review(quote(lab), quote(results), calibration.per_metric, seed)
        run.publish(Step.CALIBRATION, {"review_items.json": [item.model_dump(mode="json") for item in items]})
        run.show(Step.CALIBRATION, summaries.summarise_review_sample(items))
        labels_decision = review_calibration(items, run.review, min_labels=MIN_LABELS)
        labels = person_labels(labels_decision)
        fitted = steps.calibrate(quote(items), quote(labels), quote(results), seed)
        thresholds = steps.threshold_book(quote(results), quote(fitted), reviewer_of(labels_decision))
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
        run.show(Step.CALIBRATION, summaries.summarise_calibration(fitted, labels_decision))

    with run.step(Step.FAILURE_CLUSTERING) as counts:
        found = steps.clusters(quote(lab), quote(results), quote(thresholds), seed)
        run.show(Step.FAILURE_CLUSTERING, summaries.summarise_clusters(found))
        names_decision = review_clusters(found, run.review)
        failure_clusters = found.model_copy(
            update={
                "clusters": [
                    c.model_copy(update={"weakness": names_decision.decision["names"].get(str(c.id), c.weakness)})
                    for c in found.clusters
                ]
            }
        )
        run.publish(Step.FAILURE_CLUSTERING, {"clusters.json": failure_clusters})
        counts.update(failures=failure_clusters.failures, clusters=len(failure_clusters.clusters))
        run.show(Step.FAILURE_CLUSTERING, summaries.summarise_clusters(failure_clusters, names_decision))

    with run.step(Step.WEAKNESS_DETECTION) as counts:
        weakness_report = steps.weaknesses(quote(lab), quote(results), quote(thresholds))
        run.publish(Step.WEAKNESS_DETECTION, {"weaknesses.json": weakness_report})
        counts.update(weak_groups=sum(len(m.weakest) for m in weakness_report.metrics))
        run.show(Step.WEAKNESS_DETECTION, summaries.summarise_weaknesses(weakness_report))

    robustness_reports, perturbed_labs = [], []
    for step, kind, chosen in (
        (Step.ROBUSTNESS_INPUT_VARIATIONS, "input_variations", robustness.variation_perturbators),
        (Step.ROBUSTNESS_ADVERSARIAL, "adversarial", robustness.adversarial_perturbators or _by_kind("adversarial")),
    ):
        with run.step(step) as counts:
            perturbed_suite = steps.perturb(
                quote(suite), chosen, list(robustness.intensities), seed, f"{run.id}-{kind}"
            )
            perturbed_lab, perturbed_results, _, _ = run.evaluate(perturbed_suite, selected, f"{run.id}-{kind}")
            reports = steps.flips(
                kind, quote(perturbed_lab), quote(perturbed_results), quote(results), quote(thresholds)
            )
            run.publish(
                step, {"test_lab.json": perturbed_lab, "flips.json": [r.model_dump(mode="json") for r in reports]}
            )
            counts.update(
                perturbators=chosen,
                cases=perturbed_suite.case_count,
                flips=sum(c.flips for r in reports for c in r.by_perturbator.values()),
            )
            run.show(step, summaries.summarise_robustness(reports, step))
        robustness_reports += reports
        perturbed_labs.append(perturbed_lab)

    summary = workflow_summary(run, [topics_decision, cases_decision, labels_decision, names_decision])
    documents = steps.compliance_artifacts(
        summary,
        quote(topic_model),
        quote(validation),
        quote(lab),
        quote(results),
        quote(fitted),
        quote(thresholds),
        quote(failure_clusters),
        quote(weakness_report),
        quote(robustness_reports),
        quote(perturbed_labs),
        {"library_s": round(library_seconds(_flow_run_id()), 3)},
    )
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
