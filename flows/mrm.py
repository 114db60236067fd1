"""The MRM workflow (seed 002 "Model Risk Management"): nine steps with human approval pauses.

Each step's work is a cached, persisted task (its time kept per attempt in the run's state, ``tasks.timing``);
its documents are exported under ``<out>/<step>/`` and stored as versioned artifacts ``mrm/<name>/<step>/``.
The run's state and decisions live in the object store: killing the run and rerunning it resumes after the
last finished step with the decisions already taken, and the host is never asked again for an answered case.
The steps themselves are in ``flows/mrm_steps.py``; this flow is their table of contents.
"""

from typing import Any

from assay.flows import mrm_steps as step
from assay.flows.mrm_run import WorkflowRun
from assay.flows.mrm_steps import MIN_LABELS
from prefect import flow

from assay.models.plugins import EvaluatorSelection
from assay.models.workflow import (
    RUN_DEFAULTS,
    CalibrationParameters,
    MrmParameters,
    ReviewParameters,
    RobustnessParameters,
    TestGenerationParameters,
    TestValidationParameters,
    TopicModelingParameters,
)

__all__ = ["MIN_LABELS", "mrm_workflow"]


@flow(name="mrm-workflow", log_prints=True, persist_result=False)
def mrm_workflow(
    corpus: str | None = None,
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[EvaluatorSelection] | None = None,
    out: str | None = None,
    name: str = RUN_DEFAULTS.mrm_name,
    seed: int = RUN_DEFAULTS.seed,
    interactive: bool = True,
    approvals: str | None = None,
    topic_modeling: TopicModelingParameters = TopicModelingParameters(),  # noqa: B008 - pydantic defaults
    test_generation: TestGenerationParameters = TestGenerationParameters(),  # noqa: B008
    test_validation: TestValidationParameters = TestValidationParameters(),  # noqa: B008
    calibration: CalibrationParameters = CalibrationParameters(),  # noqa: B008
    robustness: RobustnessParameters = RobustnessParameters(),  # noqa: B008
    review: ReviewParameters = ReviewParameters(),  # noqa: B008
    run_id: str | None = None,
) -> dict[str, Any]:
    """Validate a RAG system end to end: topics -> tests -> validation -> evaluation -> calibration ->
    failure clusters -> weaknesses -> robustness (variations, adversarial) -> compliance artifacts.

    Args:
        corpus: The folder of documents (.md, .txt and .pdf files, subfolders included) that the topics and
            test questions come from; empty: the packaged sample corpus.
        hosts: The systems under test: host types (sample-rag), host files (.json or .toml) or host
            configurations as objects; empty: sample-rag, the packaged sample RAG over the sample corpus.
        evaluators: The evaluators of step 4, which also score the perturbed answers of steps 8 and 9: evaluator
            ids, or all (every evaluator the lab has inputs for); empty: recommended, the offline checks that
            mean something on any suite, chosen by what it has (no reference n-gram or edit metric).
        out: The export folder for the run's files; {run_id} in it becomes the run id; empty:
            <assay home>/exports/<run id>.
        name: The name of the workflow's artifacts in the store (mrm/<name>/<step>/); default mrm.
        seed: The seed of every random choice of the run (topic modeling, test generation, the calibration
            sample, failure clustering, perturbations).
        interactive: Pause for reviewers in the Prefect UI after topic modeling, test validation, calibration and
            failure clustering; off: decide from approvals and the steps' policies, without pausing.
        approvals: A JSON file of reviewer decisions written in advance, used when interactive is off: one
            entry per reviewed step (topic-modeling, test-validation, calibration, failure-clustering) and
            optionally the reviewer's name (reviewer); a step it leaves out, or every step when it is empty, is
            decided by the step's policy.
        topic_modeling: Step 1 (topic modeling) parameters; a field left empty is searched in a grid sized to
            the corpus.
        test_generation: Step 2 (test generation) parameters: test cases per topic and the question generators.
        test_validation: Step 3 (test validation) parameters: the NLI model and the outlier threshold.
        calibration: Step 5 (calibration) parameters: the answers sampled for review per metric and per form.
        robustness: Steps 8 and 9 (input variations, adversarial) parameters: perturbators and intensities.
        review: How the forms of every reviewed step (1, 3, 5 and 6) page: items per form.
        run_id: The id of an unfinished run to continue (its decisions and answers are reused); empty: the
            unfinished run of the same inputs (corpus content, hosts, evaluators, step parameters, seed and
            name) is continued if there is one, else a new run starts.
    """
    run = WorkflowRun.open(
        corpus=corpus, hosts=hosts, evaluators=evaluators, out=out, name=name, seed=seed, interactive=interactive,
        approvals=approvals, run_id=run_id, parameters=MrmParameters(topic_modeling=topic_modeling,
        test_generation=test_generation, test_validation=test_validation, calibration=calibration,
        robustness=robustness, review=review),
    )  # fmt: skip
    chunks, topic_model, topics_decision = step.topic_modeling(run, corpus, topic_modeling, seed)
    suite = step.test_generation(run, topic_model, chunks, topics_decision, test_generation, seed)
    suite, validation, cases_decision = step.test_validation(run, suite, chunks, test_validation)
    lab, results, selected = step.automated_evaluation(run, suite, evaluators, name)
    fitted, thresholds, labels_decision = step.calibration(run, lab, results, calibration, seed)
    clusters, names_decision = step.failure_clustering(run, lab, results, thresholds, seed)
    weaknesses = step.weakness_detection(run, lab, results, thresholds)
    flips, perturbed_labs = step.robustness_testing(run, suite, selected, results, thresholds, robustness, seed)
    return step.compliance_artifacts(
        run, name, [topics_decision, cases_decision, labels_decision, names_decision],
        topic_model, validation, lab, results, fitted, thresholds, clusters, weaknesses, flips, perturbed_labs,
    )  # fmt: skip
