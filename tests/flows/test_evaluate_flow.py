"""The evaluate flow end to end: results in seed 002's shape, versioned artifacts, resume after a crash."""

import json
from pathlib import Path
from typing import ClassVar

import pytest
from assay.artifacts.evaluation_results import with_context
from assay.flows.evaluate import evaluate_flow

from assay.config import load_settings
from assay.hosts import Host, HostAnswer, register_host
from assay.models import TestCase, TestLab, TestSuite
from assay.storage import ArtifactStore, open_object_store

ROW_KEYS = {
    "input",
    "expected_output",
    "actual_output",
    "lab_row",
    "context_meta",
    "actual_duration",
    "cost",
    "test_case_key",
    "model_key",
    "key",
    "test_key",
    "categories",
    "relationships",
    "output_condition",
    "corpus",
}


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_suite_against_two_hosts(small_suite: Path, tmp_path: Path) -> None:
    summary = evaluate_flow(
        out=str(tmp_path),
        suite=str(small_suite),
        hosts=["sample-rag", "sample-rag-keyword"],
        name="flow-test",
    )
    for evaluator_id, metric in [
        ("answer_semantic_similarity", "answer_similarity"),
        ("text_matching", "model_passes"),
    ]:
        document = read(tmp_path / evaluator_id / "results.json")
        assert set(document) == {"results", "test_lab", "models", "evaluator"}
        assert len(document["results"]) == 12
        for row in document["results"]:
            assert set(row) >= ROW_KEYS
            assert metric in row
        assert {model["key"] for model in document["models"]} == {"sample-rag", "sample-rag-keyword"}
        meta = document["evaluator"]["metrics_meta"]
        assert all(
            {"key", "display_name", "description", "higher_is_better", "threshold", "range", "is_primary"} <= set(m)
            for m in meta
        )
        assert document["evaluator"]["id"] == evaluator_id
        # the context is written once, in the lab; each row names its lab row (issue 12)
        lab = read(tmp_path / "test_lab.json")
        assert document["test_lab"] == {"file": "../test_lab.json", "rows": len(lab["rows"]), "row_field": "lab_row"}
        assert all("context" not in row for row in document["results"])
        for row in document["results"]:
            lab_row = lab["rows"][row["lab_row"]]
            assert (lab_row["model_key"], lab_row["test_case"]["key"]) == (row["model_key"], row["test_case_key"])
            assert row["context_meta"] == [
                {"doc_uri": chunk["doc_uri"], "rank": chunk["rank"], "score": chunk["score"]}
                for chunk in lab_row["context"]
            ]
        full = with_context(document, lab)["results"]
        assert all(row["context"] and row["context"][0] == lab["rows"][row["lab_row"]]["context"][0]["text"]
                   for row in full)  # fmt: skip
    assert summary == read(tmp_path / "summary.json")
    similarity = summary["metrics"]["sample-rag"]["answer_semantic_similarity"]["answer_similarity"]
    assert similarity["scored"] == 6 and 0.0 < similarity["mean"] <= 1.0
    assert read(tmp_path / "run.json")["status"] == "complete"

    store = ArtifactStore(open_object_store(load_settings()))
    manifest = store.latest("evaluations/flow-test/summary.json")
    assert manifest.producer.run_id == summary["run_id"]
    assert store.verify("evaluations/flow-test").ok


def test_each_run_adds_an_artifact_version(small_suite: Path, tmp_path: Path) -> None:
    store = ArtifactStore(open_object_store(load_settings()))
    name = "evaluations/versioned/summary.json"
    evaluate_flow(out=str(tmp_path / "a"), suite=str(small_suite), evaluators=["text_matching"], name="versioned")
    first_manifest, first = store.get(name)
    evaluate_flow(out=str(tmp_path / "b"), suite=str(small_suite), evaluators=["text_matching"], name="versioned")
    latest = store.latest(name)
    assert latest.version == first_manifest.version + 1
    assert store.get(name, first_manifest.version) == (first_manifest, first)


class Crash(BaseException):
    """Stands for the process dying mid-run."""


class FlakyProcessHost(Host):
    type: ClassVar[str] = "crashing-test-host"
    description: ClassVar[str] = "test double"
    calls: ClassVar[list[str]] = []
    crash_at: ClassVar[int | None] = None

    async def answer(self, case: TestCase) -> HostAnswer:
        if FlakyProcessHost.crash_at is not None and len(FlakyProcessHost.calls) == FlakyProcessHost.crash_at:
            raise Crash
        FlakyProcessHost.calls.append(case.key)
        return HostAnswer(actual_output=f"The answer to {case.prompt}")


register_host(FlakyProcessHost)


def test_rerun_after_crash_resumes_without_asking_again(tmp_path: Path) -> None:
    cases = [
        TestCase(key=f"k{i:02d}", prompt=f"question {i}", expected_output=f"The answer to question {i}")
        for i in range(40)
    ]
    suite = TestSuite(name="crashy", tests=[{"key": "t", "test_cases": cases}])
    suite_path = tmp_path / "suite.json"
    suite_path.write_text(suite.model_dump_json())
    host = {"key": "crashy", "type": "crashing-test-host"}
    out = tmp_path / "out"

    FlakyProcessHost.calls, FlakyProcessHost.crash_at = [], 35
    with pytest.raises(BaseException):  # noqa: B017 - the flow re-raises the simulated crash as it is
        evaluate_flow(out=str(out), suite=str(suite_path), hosts=[host], evaluators=["answer_semantic_similarity"])
    assert read(out / "run.json")["status"] == "running"
    run_id = read(out / "run.json")["run_id"]

    FlakyProcessHost.calls, FlakyProcessHost.crash_at = [], None
    summary = evaluate_flow(
        out=str(out), suite=str(suite_path), hosts=[host], evaluators=["answer_semantic_similarity"]
    )
    assert summary["run_id"] == run_id
    assert FlakyProcessHost.calls == [f"k{i:02d}" for i in range(32, 40)]  # the first shard of 32 was kept
    lab = TestLab.model_validate(read(out / "test_lab.json"))
    assert [row.test_case.key for row in lab.rows] == [case.key for case in cases]
    assert summary["metrics"]["crashy"]["answer_semantic_similarity"]["answer_similarity"]["scored"] == 40


def test_precomputed_lab_is_evaluated_without_hosts(tmp_path: Path) -> None:
    lab_path = Path(__file__).parents[1] / "formats" / "data" / "eval_studio_testlab.json"
    summary = evaluate_flow(
        out=str(tmp_path),
        lab=str(lab_path),
        lab_format="eval-studio-testlab",
        evaluators=["text_matching", "answer_semantic_similarity"],
    )
    assert summary["test_cases"] >= 1
    rows = read(tmp_path / "answer_semantic_similarity" / "results.json")["results"]
    assert rows[0]["actual_output"].startswith("The boiling point of water")


def test_flow_keeps_checkpoints_and_artifacts_in_s3(
    small_suite: Path,
    tmp_path: Path,
    seaweed,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    bucket = "flow-s3-test"
    monkeypatch.setenv("ASSAY_STORE__BACKEND", "s3")
    monkeypatch.setenv("ASSAY_STORE__ENDPOINT", seaweed.endpoint)
    monkeypatch.setenv("ASSAY_STORE__BUCKET", bucket)
    monkeypatch.setenv("ASSAY_STORE__SECURE", "false")
    monkeypatch.setenv("ASSAY_STORE__ACCESS_KEY", seaweed.access_key)
    monkeypatch.setenv("ASSAY_STORE__SECRET_KEY", seaweed.secret_key)
    summary = evaluate_flow(out=str(tmp_path), suite=str(small_suite), evaluators=["text_matching"], name="in-s3")

    store = ArtifactStore(seaweed.object_store(bucket=bucket))
    _, data = store.get("evaluations/in-s3/summary.json")
    assert json.loads(data) == summary
    assert store.verify().ok
    assert seaweed.object_store(bucket=bucket).list(f"runs/{summary['run_id']}/lab/sample-rag/")
    for path in tmp_path.rglob("*.json"):
        assert seaweed.secret_key not in path.read_text()


def test_all_evaluators_run_or_say_why_not(small_suite: Path, tmp_path: Path) -> None:
    from assay.evaluators import evaluator_ids

    summary = evaluate_flow(
        out=str(tmp_path), suite=str(small_suite), hosts=["sample-rag", "sample-rag-keyword"], evaluators=["all"]
    )
    ran, skipped = set(summary["evaluators"]), summary["skipped_evaluators"]
    assert ran | set(skipped) == set(evaluator_ids()) and not ran & set(skipped)
    assert {"answer_semantic_similarity", "text_matching"} <= ran
    assert all(reason for reason in skipped.values())
    for evaluator_id in ran:
        assert (tmp_path / evaluator_id / "results.json").exists()
        assert (tmp_path / evaluator_id / "leaderboard.md").read_text().startswith(f"# Leaderboard: {evaluator_id}")
    problems = read(tmp_path / "problems" / "problems_and_actions.json")
    insights = read(tmp_path / "insights" / "insights_and_actions.json")
    assert problems["schema_version"] == 1 and isinstance(problems["problems"], list)
    assert any(insight["insight_type"] == "best model" for insight in insights["insights"])
    assert summary["problems"]["high"] + summary["problems"]["medium"] + summary["problems"]["low"] == len(
        problems["problems"]
    )


def test_rerunning_a_run_serves_finished_steps_from_the_cache(small_suite: Path, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    def task_states(flow_run_id) -> dict[str, str]:  # type: ignore[no-untyped-def]
        with get_client(sync_client=True) as client:
            runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
        return {run.name: run.state.name for run in runs}

    arguments = {
        "out": str(tmp_path),
        "suite": str(small_suite),
        "evaluators": ["text_matching"],
        "run_id": "fixed-run",
    }
    first = evaluate_flow(**arguments, return_state=True)
    second = evaluate_flow(**arguments, return_state=True)
    assert first.result()["run_id"] == second.result()["run_id"] == "fixed-run"
    # task runs are named after what they do, so the Prefect UI reads like the run
    assert task_states(first.state_details.flow_run_id)["evaluate-text_matching"] == "Completed"
    states = task_states(second.state_details.flow_run_id)
    assert states["ask-hosts-fixed-run"] == "Cached" and states["evaluate-text_matching"] == "Cached"


def test_a_bad_evaluator_parameter_fails_before_the_run_starts(small_suite: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no parameter"):
        evaluate_flow(
            out=str(tmp_path),
            suite=str(small_suite),
            evaluators=["text_matching"],
            evaluator_parameters={"text_matching": {"no_such_knob": 1}},
        )
    assert not (tmp_path / "run.json").exists()
