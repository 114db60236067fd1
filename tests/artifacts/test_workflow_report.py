"""The workflow report data from hand-made step outputs: one section per step with status, numbers, decisions
and who took them; missing steps reported as not run."""

import json

from assay.artifacts.workflow_report import build_workflow_report

from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.models.evaluation import CaseScores, EvaluationResult, EvaluatorSpec, MetricAggregate, MetricMeta
from assay.models.findings import Insight, Problem
from assay.models.mrm import (
    CaseValidation,
    Decision,
    FlipCount,
    RobustnessReport,
    SuiteValidation,
    Topic,
    TopicModel,
    WorkflowSummary,
)
from assay.models.steps import Step

CASES = [
    TestCase(key="a", prompt="What is the fee?", topic="cards", generator="numerical"),
    TestCase(key="b", prompt="Who can open an ISA?", topic="savings", generator="simple_factual"),
]
LAB = TestLab(
    name="lab",
    models=[ModelHost(key="rag", type="t", name="Bank RAG")],
    rows=[
        TestLabRow(test_case=CASES[0], model_key="rag", actual_output="£25"),
        TestLabRow(test_case=CASES[1], model_key="rag", error="timeout"),
    ],
)
RESULT = EvaluationResult(
    evaluator=EvaluatorSpec(
        id="similarity",
        display_name="Similarity",
        description="d",
        domain="generation",
        required_inputs=["actual_output"],
        metrics=[MetricMeta(key="score", display_name="Score", description="d", threshold=0.5, is_primary=True)],
    ),
    rows=[CaseScores(test_case_key="a", model_key="rag", scores={"score": 0.8})],
    aggregates={"rag": {"score": MetricAggregate(mean=0.8, scored=1, unscored=0, passed=1)}},
)
TOPICS = TopicModel(
    topics=[Topic(id=0, label="fee card", keywords=["fee", "card"], chunk_refs=["fees.md#0", "fees.md#1"])],
    outlier_chunk_refs=["misc.md#0"],
    config={"min_topic_size": 2},
    silhouette=0.41,
    grid=[{"silhouette": 0.41}, {"silhouette": 0.2}],
)

STEP_TITLES = {step.value: step.title for step in Step}
VALIDATION = SuiteValidation(
    cases=[
        CaseValidation(test_case_key="a", cosine=0.8),
        CaseValidation(test_case_key="b", cosine=0.2, outlier=True, reasons=["cosine 0.20 below 0.35"]),
    ],
    nli_status="model absent",
)
ROBUSTNESS = [
    RobustnessReport(
        kind="input_variations",
        evaluator_id="similarity",
        metric="score",
        by_perturbator={
            "typos": FlipCount(cases=2, flips=1, pass_to_fail=1, fail_to_pass=0),
            "comma": FlipCount(cases=2, flips=0, pass_to_fail=0, fail_to_pass=0),
        },
        flipped_row_keys=["rag:a~typos"],
    )
]
PROBLEM = Problem(description="p", severity="high", problem_type="runtime", problem_code="AVID / P0200")
SUMMARY = WorkflowSummary(
    run_id="run-1",
    steps={
        step: {"status": "completed", "wall_s": 1.5, "artifacts": [f"mrm/x/{step}/out.json"]} for step in STEP_TITLES
    }
    | {"robustness-adversarial": {"status": "completed", "wall_s": 0.5, "perturbators": ["base64"], "cases": 2}},
    decisions=[
        Decision(step="topic-modeling", decided_by="policy", decision={"excluded_topic_ids": []}, note="keep all"),
        Decision(step="test-validation", decided_by="person", decision={"excluded_case_keys": ["b"]}),
    ],
)


def report(**overrides: object) -> dict:
    inputs: dict[str, object] = {
        "topics": TOPICS,
        "validation": VALIDATION,
        "lab": LAB,
        "results": [RESULT],
        "problems": [PROBLEM],
        "insights": [],
        "calibration": None,
        "clusters": None,
        "weaknesses": None,
        "robustness": ROBUSTNESS,
        "decisions": None,
    }
    return build_workflow_report(SUMMARY, **(inputs | overrides))  # type: ignore[arg-type]


def test_every_step_has_a_section_with_its_decisions() -> None:
    data = report(actionable_artifacts=["mrm/x/artifacts/guardrails.json"])
    sections = {section["step"]: section for section in data["steps"]}
    assert list(sections) == list(STEP_TITLES)
    topic = sections["topic-modeling"]
    assert topic["status"] == "completed" and topic["decided_by"] == "policy"
    assert topic["decisions"] == [{"decided_by": "policy", "decision": {"excluded_topic_ids": []}, "note": "keep all"}]
    assert topic["numbers"] == {
        "topics": 1, "chunks": 3, "outlier_chunks": 1, "silhouette": 0.41, "configurations_tried": 2
    }
    assert sections["test-validation"]["decided_by"] == "person"
    assert sections["test-validation"]["numbers"]["outliers"] == 1
    assert sections["test-validation"]["numbers"]["mean_cosine"] == 0.5
    assert sections["test-generation"]["decided_by"] is None and sections["test-generation"]["numbers"] == {"cases": 2}
    assert sections["test-generation"]["details"]["by_generator"] == {"numerical": 1, "simple_factual": 1}
    assert sections["automated-evaluation"]["numbers"] == {
        "evaluators": 1, "problems": 1, "insights": 0, "models": 1, "rows": 2, "answered": 1, "host_errors": 1
    }
    variations = sections["robustness-input-variations"]
    assert variations["numbers"] == {"reports": 1, "cases": 4, "flips": 1}
    adversarial = sections["robustness-adversarial"]
    assert adversarial["numbers"] == {"reports": 0, "cases": 0, "flips": 0}
    assert adversarial["recorded"] == {"perturbators": ["base64"], "cases": 2}
    assert data["artifacts"][-2:] == ["mrm/x/robustness-input-variations/out.json", "mrm/x/artifacts/guardrails.json"]
    assert data["run_id"] == "run-1" and data["schema_version"] == 1
    json.dumps(data)  # JSON-ready


def test_steps_without_output_say_they_did_not_run() -> None:
    data = report()
    sections = {section["step"]: section for section in data["steps"]}
    for step in ("calibration", "failure-clustering", "weakness-detection"):
        assert sections[step]["status"] == "not run"
        assert sections[step]["message"] == f"{STEP_TITLES[step]} did not run: the report has no output of it."
        assert sections[step]["numbers"] == {}
    empty = build_workflow_report(WorkflowSummary(run_id="r", steps={"calibration": {"status": "failed"}}))
    assert [section["status"] for section in empty["steps"]] == ["not run"] * 4 + ["failed"] + ["not run"] * 4
    assert empty["leaderboards"] == []
    assert empty["problems"]["available"] is False and empty["problems"]["count"] == 0


def test_leaderboards_problems_and_insights() -> None:
    data = report(insights=[Insight(description="i", insight_type="best model")])
    (board,) = data["leaderboards"]
    assert board["evaluator"] == "similarity" and board["table"][0]["model_name"] == "Bank RAG"
    assert data["problems"]["by_severity"] == {"high": 1, "medium": 0, "low": 0}
    assert [item["description"] for item in data["insights"]["items"]] == ["i"]


def test_explicit_decisions_replace_the_summarys() -> None:
    mixed = [
        Decision(step="calibration", decided_by="person", decision={"passed_item_ids": ["x"]}),
        Decision(step="calibration", decided_by="policy", decision={}),
        Decision(step="extra-review", decided_by="person", decision={}),
    ]
    sections = {section["step"]: section for section in report(decisions=mixed)["steps"]}
    assert sections["calibration"]["decided_by"] == "mixed"
    assert sections["topic-modeling"]["decided_by"] is None
    assert sections["extra-review"]["title"] == "extra-review" and sections["extra-review"]["status"] == "not run"
