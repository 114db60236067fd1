"""A small but real MRM run export, built from the step models and dumped under the relative names the MRM
flow publishes (``<step>/<file>.json``, ``artifacts/...``). Its texts carry hostile input (script tags,
markup, ANSI codes) where a corpus, a generator, a reviewer or a system under test could have put them."""

from typing import Any

from assay.artifacts.guardrails import build_guardrail_config

from assay.models import ModelHost, TestCase, TestLab, TestLabRow, TestSuite
from assay.models.mrm import (
    Calibration,
    CalibrationValidity,
    CaseValidation,
    Decision,
    FailureCluster,
    FailureClusters,
    FlipCount,
    GroupStat,
    MetricCalibration,
    MetricWeaknesses,
    RobustnessReport,
    SuiteValidation,
    ThresholdAgreement,
    Topic,
    TopicModel,
    WeaknessReport,
    WorkflowSummary,
)
from assay.models.suite import PERTURBATION, Relationship, Test
from assay.models.thresholds import ThresholdBook, ThresholdEntry

RUN_ID = "20261123T000000-testrun"
SCRIPT_KEYWORD = "<script>alert('topic')</script>"
IMG_QUESTION = "What is <img src=x onerror=alert('question')> the fee?"
CLUSTER_NAME = "<b onmouseover=alert('cluster')>fees</b>"
ANSI_LABEL = "\x1b[31mcards\x1b[0m, fees"
PATCH_TEXT = "# FAQ\n\nQ: fee?\nA: <script>alert('patch')</script> £25\n"

CASES = [
    TestCase(
        key="c1",
        prompt=IMG_QUESTION,
        expected_output="£25",
        topic="cards",
        generator="numerical_questions",
        categories=["generated", "written_by:offline"],
    ),
    TestCase(
        key="c2",
        prompt="Who can open an ISA?",
        expected_output="Adults.",
        topic="savings",
        generator="simple_factual_questions",
        categories=["generated", "written_by:offline"],
    ),
    TestCase(
        key="c3",
        prompt="Is the moon a bank?",
        expected_output="No.",
        topic="savings",
        generator="simple_factual_questions",
        categories=["generated", "written_by:llm"],
    ),
]


def person(step: str, reviewer: str, source: str, decision: dict[str, Any]) -> Decision:
    return Decision(
        step=step,
        decided_by="person",
        decision=decision,
        reviewer=reviewer,
        source=source,
        run_id=RUN_ID,
        decided_at="2026-11-23T10:00:00+00:00",
        note=f"by {reviewer}",
    )


def policy(step: str, decision: dict[str, Any]) -> Decision:
    return Decision(
        step=step, decided_by="policy", decision=decision, source="policy", run_id=RUN_ID, note=f"policy for {step}"
    )


def _book(reviewer: str, calibrated: bool) -> ThresholdBook:
    return ThresholdBook(
        reviewer=reviewer,
        entries=[
            ThresholdEntry(
                evaluator_id="groundedness",
                metric="groundedness",
                threshold=0.62 if calibrated else 0.75,
                higher_is_better=True,
                source="calibrated" if calibrated else "default",
                set_by=reviewer if calibrated else "evaluator default",
                default_threshold=0.75,
                calibration="refitted" if calibrated else "no reviewer",
            ),
            ThresholdEntry(
                evaluator_id="pii_leakage",
                metric="model_failures",
                threshold=0.2,
                higher_is_better=False,
                source="user",
                set_by="run parameter metric_threshold",
                default_threshold=0.5,
            ),
        ],
    )


def _calibration(reviewed: bool) -> Calibration:
    return Calibration(
        decided_by="person" if reviewed else "no reviewer",
        reviewers=["Ana Lima"] if reviewed else [],
        rounds=2 if reviewed else 1,
        human_passed_failures=["rag:c2"] if reviewed else [],
        metrics=[
            MetricCalibration(
                evaluator_id="groundedness",
                metric="groundedness",
                higher_is_better=True,
                default_threshold=0.75,
                calibrated_threshold=0.62 if reviewed else None,
                interval=(0.55, 0.7) if reviewed else None,
                labels=8 if reviewed else 0,
                agreement_before=0.5 if reviewed else None,
                agreement_after=0.875 if reviewed else None,
                stable=reviewed,
                method="logistic" if reviewed else "too few labels",
                validity=_validity() if reviewed else None,
            ),
        ],
    )


def _validity() -> CalibrationValidity:
    """Bo Chen's 8 labels (5 acceptable) of step 5: accuracy 0.5 at the default 0.75, 0.875 at 0.62."""
    return CalibrationValidity(
        n=8,
        acceptable=5,
        auc=0.867,
        auc_low=0.6,
        auc_high=1.0,
        before=ThresholdAgreement(threshold=0.75, accuracy=0.5, accuracy_low=0.125, accuracy_high=0.875),
        after=ThresholdAgreement(threshold=0.62, accuracy=0.875, accuracy_low=0.625, accuracy_high=1.0),
        refitted=True,
        labelled_by=["Bo Chen"],
    )


def _perturbed_lab() -> TestLab:
    variant = TestCase(
        key="c2~comma-medium",
        prompt="Who, can open an ISA?",
        topic="savings",
        generator="simple_factual_questions",
        categories=["perturbed", "perturbator:comma", "intensity:medium"],
        relationships=[Relationship(type=PERTURBATION, target="c2")],
    )
    return TestLab(
        name="perturbed",
        models=[ModelHost(key="rag", type="t", name="Bank RAG")],
        rows=[TestLabRow(test_case=variant, model_key="rag", actual_output="Anyone <i>at all</i>.")],
    )


def mrm_export(*, reviewed: bool = True) -> dict[str, Any]:
    """Relative name -> document. ``reviewed``: a person labelled, named topics and clusters; otherwise the
    policies decided everything. The adversarial robustness step is left out (not run)."""
    decisions = (
        [
            person("topic-modeling", "Ana <em>Lima</em>", "prefect-ui", {"excluded_topic_ids": [1]}).model_copy(
                update={"in_words": ['topic 1 "cards, fees <b>" excluded']}
            ),
            person("test-validation", "Ana Lima", "prefect-ui", {"excluded_case_keys": ["c3"]}),
            person("calibration", "Bo Chen", "approvals-file", {"passed_item_ids": ["x"], "failed_item_ids": ["y"]}),
            person("failure-clustering", "Ana Lima", "prefect-ui", {"names": {"0": CLUSTER_NAME}}),
        ]
        if reviewed
        else [
            policy("topic-modeling", {"excluded_topic_ids": []}),
            policy("test-validation", {"excluded_case_keys": []}),
            policy("calibration", {"passed_item_ids": [], "failed_item_ids": []}),
            policy("failure-clustering", {"names": {"0": "fees, card"}}),
        ]
    )
    summary = WorkflowSummary(
        run_id=RUN_ID,
        steps={
            "topic-modeling": {"status": "completed", "wall_s": 12.5, "chunks": 7, "topics": 2},
            "test-validation": {"status": "completed", "wall_s": 1.25, "outliers": 1, "kept": 2},
            "robustness-input-variations": {"status": "completed", "wall_s": 3.0, "flips": 1},
        },
        decisions=decisions,
    )
    topics = TopicModel(
        topics=[
            Topic(id=0, label=ANSI_LABEL, keywords=["fee", SCRIPT_KEYWORD], chunk_refs=["a.md#0", "a.md#1", "b.md#0"]),
            Topic(id=1, label="savings, isa", keywords=["isa", "savings"], chunk_refs=["c.md#0", "c.md#1"]),
        ],
        outlier_chunk_refs=["d.md#0", "d.md#1"],
        config={"min_topic_size": 2},
        silhouette=0.41,
        grid=[{"min_topic_size": 2, "silhouette": 0.41}, {"min_topic_size": 3, "silhouette": 0.3}],
    )
    suite = TestSuite(name="generated", tests=[Test(key="topic-0", test_cases=CASES)])
    validation = SuiteValidation(
        nli_status="NLI model not configured",
        thresholds={"cosine": 0.35},
        cases=[
            CaseValidation(test_case_key="c1", cosine=0.81, bertscore_f1=0.7),
            CaseValidation(test_case_key="c2", cosine=0.66, bertscore_f1=None),
            CaseValidation(
                test_case_key="c3",
                cosine=0.12,
                bertscore_f1=0.2,
                outlier=True,
                reasons=["question and answer barely related to the source (cosine 0.120 < 0.350)"],
            ),
        ],
    )
    clusters = FailureClusters(
        failures=5,
        clusters=[
            FailureCluster(
                id=0,
                size=3,
                row_keys=["rag:c1"],
                keywords=["fee", "card"],
                example_questions=[IMG_QUESTION],
                weakness=CLUSTER_NAME if reviewed else "fees, card",
            ),
            FailureCluster(id=1, size=2, row_keys=["rag:c2"], keywords=["isa"], example_questions=["ISA?"]),
        ],
    )
    stat = GroupStat
    weaknesses = WeaknessReport(
        metrics=[
            MetricWeaknesses(
                evaluator_id="groundedness",
                metric="groundedness",
                by_topic={"rag:cards": stat(mean=0.4, cases=3, pass_rate=0.0)},
                by_question_type={"rag:numerical_questions": stat(mean=0.4, cases=3, pass_rate=0.0)},
                grid={
                    "rag:cards": {"numerical_questions": stat(mean=0.4, cases=3, pass_rate=0.0)},
                    "other:cards": {"numerical_questions": stat(mean=0.8, cases=1, pass_rate=1.0)},
                    "rag:savings": {"simple_factual_questions": stat(mean=0.9, cases=2, pass_rate=1.0)},
                },
                weakest=["model 'rag', topic 'cards': mean 0.40 over 3 cases vs 0.70 overall"],
            )
        ]
    )
    flips = [
        RobustnessReport(
            kind="input_variations",
            evaluator_id="groundedness",
            metric="groundedness",
            by_perturbator={
                "comma": FlipCount(cases=4, flips=1, pass_to_fail=1, fail_to_pass=0),
                "word_swap": FlipCount(cases=4, flips=0, pass_to_fail=0, fail_to_pass=0),
            },
            flipped_row_keys=["rag:c2~comma-medium"],
        ),
        RobustnessReport(
            kind="input_variations",
            evaluator_id="rouge",
            metric="rouge_l",
            by_perturbator={"comma": FlipCount(cases=4, flips=2, pass_to_fail=1, fail_to_pass=1)},
        ),
    ]
    book = _book("Bo Chen (approvals-file)" if reviewed else "no reviewer", reviewed)
    dump = lambda model: model.model_dump(mode="json")  # noqa: E731
    return {
        "run.json": {
            "run_id": RUN_ID,
            "status": "complete",
            "started_at": "2026-11-23T09:00:00Z",
            "parameters": {
                "corpus": "/data/bank-corpus",
                "name": "bank",
                "seed": 3,
                "hosts": [{"key": "rag", "type": "t", "name": "Bank RAG", "url": ""}],
                "robustness": {"intensities": ["medium"]},
            },
        },
        "workflow_summary.json": {**dump(summary), "timing": {"library_s": 40.5}},
        "topic-modeling/topics.json": dump(topics),
        "test-generation/suite.json": dump(suite),
        "test-validation/validation.json": dump(validation),
        "automated-evaluation/groundedness/results.json": {
            "results": [{"model_key": "rag", "test_case_key": "c2", "groundedness": 0.8}]
        },
        "calibration/calibration.json": dump(_calibration(reviewed)),
        "calibration/thresholds.json": dump(book),
        "failure-clustering/clusters.json": dump(clusters),
        "weakness-detection/weaknesses.json": dump(weaknesses),
        "robustness-input-variations/flips.json": [dump(report) for report in flips],
        "robustness-input-variations/test_lab.json": dump(_perturbed_lab()),
        "artifacts/corpus_patch.md": PATCH_TEXT,
        "artifacts/system_prompt_extension.md": "## Additional instructions\n\n- Answer from the context.\n",
        "artifacts/guardrails.json": build_guardrail_config(
            book, calibration=_calibration(reviewed), run_id=RUN_ID, published=lambda evaluator, metric: []
        ),
        "report.json": {"run_id": RUN_ID, "steps": []},
    }
