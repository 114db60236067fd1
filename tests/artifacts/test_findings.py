"""Problems, insights and leaderboards from a hand-made lab with known outcomes."""

import pytest
from assay.artifacts.findings import find_insights, find_problems, leaderboard, leaderboard_markdown
from assay.evaluators import build_evaluator, run_evaluator

from assay.models import ModelHost, Relationship, RetrievedChunk, TestCase, TestLab, TestLabRow

CONDITION = '"£25"'
ORIGINAL = TestCase(key="fee", prompt="What is the card replacement fee?", output_condition=CONDITION)
PERTURBED = TestCase(
    key="fee-typo", prompt="What is the card replacment fee?", output_condition=CONDITION,
    relationships=[Relationship(type="perturbation", target="fee")], categories=["perturbed", "typos"],
)
HARD = TestCase(key="hard", prompt="What is the late fee?", output_condition='"£12"')


def row(case: TestCase, model: str, answer: str | None, *, context: str | None = "£25 fee", duration: float = 1.0,
        cost: float = 0.01, error: str | None = None) -> TestLabRow:
    return TestLabRow(
        test_case=case, model_key=model, actual_output=answer, error=error, actual_duration=duration, cost=cost,
        context=[RetrievedChunk(text=context, doc_uri="fees.md")] if context else [],
    )


@pytest.fixture(scope="module")
def lab() -> TestLab:
    return TestLab(
        name="findings",
        models=[ModelHost(key="good", type="t", name="Good RAG"), ModelHost(key="weak", type="t", name="Weak RAG")],
        rows=[
            row(ORIGINAL, "good", "It costs £25.", duration=0.5, cost=0.02),
            row(PERTURBED, "good", "It costs £25.", duration=0.5, cost=0.02),
            row(HARD, "good", "The late fee is £12.", context="£12 late fee", duration=0.5, cost=0.02),
            row(ORIGINAL, "weak", "It costs £25.", context="unrelated passage", duration=2.0),
            row(PERTURBED, "weak", "No", context=None, duration=2.0),  # flips, empty context, too short
            row(HARD, "weak", None, error="TimeoutError: no answer within 60s", duration=2.0),
        ],
    )


@pytest.fixture(scope="module")
def results(lab: TestLab):  # type: ignore[no-untyped-def]
    return [run_evaluator(build_evaluator("text_matching"), lab)]


def test_problems(lab: TestLab, results) -> None:  # type: ignore[no-untyped-def]
    problems = find_problems(lab, results)
    kinds = sorted((p.problem_type, p.attributes.get("model_key")) for p in problems)
    assert kinds == [("retrieval", "weak"), ("robustness", "weak"), ("runtime", "weak")]  # 0.5 passes >= 0.5
    flip = next(p for p in problems if p.problem_type == "robustness")
    assert "flipped from pass to fail" in flip.description and "'What is the card replacment fee?'" in flip.description
    assert flip.severity == "high" and flip.problem_code.startswith("AVID / P0201")
    assert flip.attributes["original"]["value"] == 1.0 and flip.attributes["perturbed"]["value"] == 0.0
    runtime = next(p for p in problems if p.problem_type == "runtime")
    assert runtime.attributes["failures"] == [{"test_case_key": "hard", "error": "TimeoutError: no answer within 60s"}]


def test_threshold_problem_only_for_the_model_below_it(lab: TestLab) -> None:
    result = run_evaluator(build_evaluator("text_matching", metric_threshold=0.9), lab)
    below = [p for p in find_problems(lab, [result]) if p.problem_type == "accuracy"]
    assert [p.attributes["model_key"] for p in below] == ["weak"]
    assert below[0].attributes["value"] == 0.5 and below[0].attributes["threshold"] == 0.9
    assert below[0].severity == "high"


def test_short_answers_are_flagged_only_with_embedding_evaluators(lab: TestLab, results) -> None:  # type: ignore[no-untyped-def]
    assert not any(p.problem_type == "data quality" for p in find_problems(lab, results))
    with_embeddings = [results[0].model_copy(update={"evaluator": results[0].evaluator.model_copy(
        update={"needs": ["embeddings"]})})]
    short = [p for p in find_problems(lab, with_embeddings) if p.problem_type == "data quality"]
    assert [case["test_case_key"] for case in short[0].attributes["test_cases"]] == ["fee-typo"]


def test_insights(lab: TestLab, results) -> None:  # type: ignore[no-untyped-def]
    insights = {(i.insight_type, i.attributes.get("model_key") or i.attributes.get("test_case_key")) for i in
                find_insights(lab, results)}
    assert insights == {
        ("fastest", "good"), ("slowest", "weak"), ("cheapest", "weak"), ("most expensive", "good"),
        ("best model", "good"), ("worst model", "weak"), ("weak point", "fee-typo"),
        ("best retrieval", "good"), ("worst retrieval", "weak"),
    }


def test_leaderboard(lab: TestLab, results) -> None:  # type: ignore[no-untyped-def]
    board = leaderboard(lab, results[0])
    assert [r["model_key"] for r in board["table"]] == ["good", "weak"]
    assert board["table"][1]["model_passes"] == 0.5 and board["table"][1]["unscored"] == 1
    assert board["failures"]["model_passes"] == [
        {"model_key": "good", "failures": 0, "scored": 3},
        {"model_key": "weak", "failures": 1, "scored": 2},
    ]
    assert [p["test_case_key"] for p in board["weak_points"]["weak"]] == ["fee-typo", "fee"]
    markdown = leaderboard_markdown(board)
    assert "| 1 | Good RAG | 1.000 |" in markdown and "## Failures: model_passes" in markdown


def test_a_host_type_that_returns_context_but_retrieved_none_is_a_problem() -> None:
    """The manual's OpenAI Assistants limitation: every answer without retrieved context is flagged, although no
    answer carries context (a plain LLM host with no context at all is not flagged)."""
    cases = [TestCase(key=f"c{i}", prompt=f"question {i}") for i in range(3)]
    models = [ModelHost(key="assistant", type="openai-assistants"), ModelHost(key="llm", type="openai-compatible")]
    rows = [TestLabRow(test_case=case, model_key=model.key, actual_output="an answer") for model in models
            for case in cases]  # fmt: skip
    problems = find_problems(TestLab(name="lab", models=models, rows=rows), [])
    empty = [problem for problem in problems if problem.problem_type == "retrieval"]
    assert [problem.attributes["model_key"] for problem in empty] == ["assistant"]
    assert "no context for 3 of 3" in empty[0].description and empty[0].severity == "high"
