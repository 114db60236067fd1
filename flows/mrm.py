"""The MRM workflow (seed 002 "Model Risk Management"): nine steps with human approval pauses.

Each step is a cached, persisted task; its output is written under ``<out>/<step>/`` and as a versioned
artifact ``mrm/<name>/<step>/...``. Killing the run and rerunning it resumes after the last finished step
(and the host is never asked again for an answered case: see ``assay.labs``).
"""

import time
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.runtime import flow_run
from prefect.utilities.annotations import quote

from assay.hosts import default_host_config
from assay.models import ModelHost
from assay.models.mrm import ReviewLabel, WorkflowSummary
from assay.mrm.approvals import CalibrationDecision, CaseDecision, TopicDecision, WeaknessDecision, load_approvals
from assay.runs import fingerprint, finish_run, start_run
from evaluators.selection import run_parameters
from flows.attempts import claim_run
from flows.mrm_steps import artifacts_documents, review_text
from flows.review import review
from tasks import mrm as steps
from tasks.evaluate import build_lab, evaluate, publish, select
from tasks.timing import library_seconds

# The manual's tutorial choice plus keyboard typos: every extra perturbator multiplies step 8's host calls.
DEFAULT_VARIATIONS = ["comma", "word_swap", "random_keyboard_typos"]

STEPS = (
    "topic-modeling",
    "test-generation",
    "test-validation",
    "automated-evaluation",
    "calibration",
    "failure-clustering",
    "weakness-detection",
    "robustness-input-variations",
    "robustness-adversarial",
)


@flow(name="mrm-workflow", log_prints=True, persist_result=False)
def mrm_workflow(
    out: str,
    corpus: str | None = None,
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[str] | None = None,
    interactive: bool = False,
    approvals: str | None = None,
    per_topic: int = 3,
    chunk_words: int = 120,
    variation_perturbators: list[str] | None = None,
    adversarial_perturbators: list[str] | None = None,
    intensities: list[str] | None = None,
    nli_model: str | None = None,
    name: str = "mrm",
    seed: int = 0,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Validate a RAG system end to end: topics -> tests -> validation -> evaluation -> calibration ->
    failure clusters -> weaknesses -> robustness (variations, adversarial) -> compliance artifacts."""
    out_dir = Path(out)
    host_configs = [
        default_host_config(h) if isinstance(h, str) else ModelHost.model_validate(h) for h in hosts or ["sample-rag"]
    ]
    approvals_file = load_approvals(Path(approvals)) if approvals else None
    record = start_run(
        out_dir,
        fingerprint(corpus, [h.model_dump(mode="json") for h in host_configs], evaluators, per_topic, seed, name),
        run_id,
    )
    run = record.run_id
    if superseded := claim_run(run):
        print(f"run {run}: marked {len(superseded)} unfinished earlier attempt(s) as crashed")
    prefix = f"mrm/{name}"
    timings: dict[str, float] = {}
    counts: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()

    def publish_output(step: str, documents: dict[str, Any]) -> None:
        counts.setdefault(step, {})["artifacts"] = steps.publish_step(
            quote({f"{step}/{key}": value for key, value in documents.items()}), str(out_dir), prefix, run
        )

    # 1. Topic modeling, then the reviewer may exclude topics.
    clock = time.perf_counter()
    chunks = steps.load_chunks(corpus, chunk_words, run)
    topic_model = steps.topics(quote(chunks), seed, run)
    publish_output("topic-modeling", {"topics.json": topic_model.model_dump(mode="json")})
    timings["topic-modeling"] = time.perf_counter() - clock
    counts["topic-modeling"] = {
        "chunks": len(chunks),
        "topics": len(topic_model.topics),
        "silhouette": topic_model.silhouette,
    }
    topic_decision = review(
        "topic-modeling",
        out_dir=out_dir,
        run_id=run,
        interactive=interactive,
        approvals=approvals_file,
        policy=TopicDecision(),
        policy_note="policy: keep every topic",
        description=review_text.topics(topic_model),
        offered=[str(topic.id) for topic in topic_model.topics],
    )

    # 2. Test generation over the kept topics.
    clock = time.perf_counter()
    suite = steps.generate(
        quote(topic_model), quote(chunks), topic_decision.decision["excluded_topic_ids"], per_topic, seed, run
    )
    publish_output("test-generation", {"suite.json": suite.model_dump(mode="json")})
    timings["test-generation"] = time.perf_counter() - clock
    counts["test-generation"] = {"cases": suite.case_count}

    # 3. Test validation, then the reviewer may exclude cases (policy: the flagged outliers).
    clock = time.perf_counter()
    validation = steps.validate(quote(suite), quote(chunks), nli_model, run)
    publish_output("test-validation", {"validation.json": validation.model_dump(mode="json")})
    timings["test-validation"] = time.perf_counter() - clock
    outliers = [case.test_case_key for case in validation.cases if case.outlier]
    case_decision = review(
        "test-validation",
        out_dir=out_dir,
        run_id=run,
        interactive=interactive,
        approvals=approvals_file,
        policy=CaseDecision(excluded_case_keys=outliers),
        policy_note="policy: exclude the flagged outliers",
        description=review_text.cases(suite, validation),
        offered=[case.key for _, case in suite.cases()],
    )
    suite = steps.exclude(quote(suite), case_decision.decision["excluded_case_keys"], run)
    counts["test-validation"] = {
        "outliers": len(outliers),
        "excluded": len(case_decision.decision["excluded_case_keys"]),
        "kept": suite.case_count,
    }

    # 4. Automated evaluation (default: every non-LLM evaluator the lab has inputs for).
    clock = time.perf_counter()
    lab = build_lab(quote(suite), host_configs, run)
    requested = evaluators or ["all"]
    selected, skipped = select(quote(lab), requested)
    parameters = {evaluator_id: run_parameters(requested, evaluator_id) for evaluator_id in selected}
    results = [evaluate(quote(lab), evaluator_id, parameters[evaluator_id], run) for evaluator_id in selected]
    evaluation = publish(
        quote(lab), quote(results), str(out_dir / "automated-evaluation"), f"{name}-evaluation", run, skipped
    )
    timings["automated-evaluation"] = time.perf_counter() - clock
    counts["automated-evaluation"] = {"evaluators": selected, "skipped": skipped, "problems": evaluation["problems"]}

    # 5. Human calibration: the reviewer labels a sample (or the policy does, resampling until stable).
    clock = time.perf_counter()
    items = steps.sample_review(quote(lab), quote(results), seed, run)
    publish_output("calibration", {"review_items.json": [item.model_dump(mode="json") for item in items]})
    labels_decision = review(
        "calibration",
        out_dir=out_dir,
        run_id=run,
        interactive=interactive,
        approvals=approvals_file,
        policy=CalibrationDecision(),
        policy_note="policy: automatic labels (answer similar to the expected one)",
        description=review_text.calibration(items),
        offered=[item.item_id for item in items],
    )
    labels = _labels(labels_decision)
    calibration = steps.calibrate(quote(lab), quote(results), quote(items), quote(labels), seed, run)
    thresholds = {
        steps.thresholds_key(m.evaluator_id, m.metric): value
        for m in calibration.metrics
        if (value := calibration.threshold(m.evaluator_id, m.metric)) is not None
    }
    publish_output(
        "calibration",
        {
            "calibration.json": calibration.model_dump(mode="json"),
            "review_items.json": [item.model_dump(mode="json") for item in items],
            # a person's labels, kept so judges can be aligned with them (assay judges align --labels ...)
            **({"labels.json": [label.model_dump(mode="json") for label in labels]} if labels else {}),
        },
    )
    timings["calibration"] = time.perf_counter() - clock
    counts["calibration"] = {
        "labels": len(labels) if labels is not None else "policy",
        "rounds": calibration.rounds,
        "recalibrated": sum(m.calibrated_threshold is not None for m in calibration.metrics),
    }

    # 6. Failure clustering, then the reviewer names the weaknesses.
    clock = time.perf_counter()
    failure_clusters = steps.clusters(quote(lab), quote(results), thresholds, seed, run)
    timings["failure-clustering"] = time.perf_counter() - clock
    names_decision = review(
        "failure-clustering",
        out_dir=out_dir,
        run_id=run,
        interactive=interactive,
        approvals=approvals_file,
        policy=WeaknessDecision(names={str(c.id): ", ".join(c.keywords[:3]) for c in failure_clusters.clusters}),
        policy_note="policy: name each cluster by its top keywords",
        description=review_text.clusters(failure_clusters),
        offered=[str(cluster.id) for cluster in failure_clusters.clusters],
    )
    failure_clusters = failure_clusters.model_copy(
        update={
            "clusters": [
                c.model_copy(update={"weakness": names_decision.decision["names"].get(str(c.id), c.weakness)})
                for c in failure_clusters.clusters
            ]
        }
    )
    publish_output("failure-clustering", {"clusters.json": failure_clusters.model_dump(mode="json")})
    counts["failure-clustering"] = {"failures": failure_clusters.failures, "clusters": len(failure_clusters.clusters)}

    # 7. Weakness detection by topic, question type and both.
    clock = time.perf_counter()
    weakness_report = steps.weaknesses(quote(lab), quote(results), thresholds, run)
    publish_output("weakness-detection", {"weaknesses.json": weakness_report.model_dump(mode="json")})
    timings["weakness-detection"] = time.perf_counter() - clock
    counts["weakness-detection"] = {"weak_groups": sum(len(m.weakest) for m in weakness_report.metrics)}

    # 8-9. Robustness to input variations and to adversarial inputs, against the step-4 baseline.
    robustness = []
    perturbed_labs = []
    for step, kind, chosen in (
        ("robustness-input-variations", "input_variations", variation_perturbators or DEFAULT_VARIATIONS),
        ("robustness-adversarial", "adversarial", adversarial_perturbators or _by_kind("adversarial")),
    ):
        clock = time.perf_counter()
        perturbed_suite = steps.perturb(quote(suite), chosen, intensities or ["medium"], seed, run)
        perturbed_lab = build_lab(quote(perturbed_suite), host_configs, f"{run}-{kind}")
        perturbed_results = [
            evaluate(quote(perturbed_lab), evaluator_id, parameters[evaluator_id], f"{run}-{kind}")
            for evaluator_id in selected
        ]
        reports = steps.flips(kind, quote(perturbed_lab), quote(perturbed_results), quote(results), thresholds, run)
        robustness += reports
        publish_output(
            step,
            {
                "test_lab.json": perturbed_lab.model_dump(mode="json"),
                "flips.json": [report.model_dump(mode="json") for report in reports],
            },
        )
        timings[step] = time.perf_counter() - clock
        counts[step] = {
            **counts.get(step, {}),
            "perturbators": chosen,
            "cases": perturbed_suite.case_count,
            "flips": sum(c.flips for r in reports for c in r.by_perturbator.values()),
        }
        perturbed_labs.append(perturbed_lab)

    # Compliance artifacts and the workflow summary.
    total = time.perf_counter() - started
    library = library_seconds(str(flow_run.id))
    summary = WorkflowSummary(
        run_id=run,
        steps={
            step: {"status": "completed", "wall_s": round(timings.get(step, 0.0), 3), **counts.get(step, {})}
            for step in STEPS
        },
        decisions=[topic_decision, case_decision, labels_decision, names_decision],
    )
    timing = {
        "total_wall_s": round(total, 3),
        "library_s": round(library, 3),
        "prefect_share": round(max(total - library, 0.0) / total, 3) if total else None,
    }
    documents = artifacts_documents(
        summary,
        topic_model=topic_model,
        validation=validation,
        lab=lab,
        results=results,
        calibration=calibration,
        clusters=failure_clusters,
        weaknesses=weakness_report,
        robustness=robustness,
        perturbed_labs=perturbed_labs,
        timing=timing,
    )
    steps.publish_step(quote(documents), str(out_dir), prefix, run)
    finish_run(out_dir, record)
    return documents["workflow_summary.json"]


def _labels(decision: Any) -> list[ReviewLabel] | None:
    """The reviewer's labels, or None when the policy decides (the calibration task then labels itself)."""
    if decision.decided_by == "policy":
        return None
    chosen = decision.decision
    reviewer = decision.reviewer.strip() or "unnamed person"
    return [ReviewLabel(item_id=item, human_passes=True, reviewer=reviewer) for item in chosen["passed_item_ids"]] + [
        ReviewLabel(item_id=item, human_passes=False, reviewer=reviewer) for item in chosen["failed_item_ids"]
    ]


def _by_kind(kind: str) -> list[str]:
    from perturbators import get_perturbator, perturbator_ids

    return [pid for pid in perturbator_ids() if get_perturbator(pid).kind == kind]
