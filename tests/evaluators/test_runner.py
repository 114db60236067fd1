import numpy as np
import pytest
from assay.evaluators import Services, build_evaluator, evaluator_ids, run_evaluator

from assay.embeddings import EmbeddingEngine
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow


def lab_of(*rows: TestLabRow) -> TestLab:
    keys = sorted({row.model_key for row in rows})
    return TestLab(name="lab", models=[ModelHost(key=key, type="testlab") for key in keys], rows=list(rows))


def row(
    key: str,
    answer: str | None,
    *,
    condition: str = "",
    expected: str = "",
    context: str | None = None,
    model: str = "m",
    error: str | None = None,
) -> TestLabRow:
    return TestLabRow(
        test_case=TestCase(key=key, prompt=f"question {key}", expected_output=expected, output_condition=condition),
        model_key=model,
        actual_output=answer,
        context=[RetrievedChunk(text=context, doc_uri="d.md")] if context is not None else [],
        error=error,
    )


def test_registry_lists_the_foundation_evaluators() -> None:
    assert {"answer_semantic_similarity", "text_matching"} <= set(evaluator_ids())
    with pytest.raises(ValueError, match="unknown evaluator 'nope'; known evaluators: "):
        build_evaluator("nope")
    with pytest.raises(ValueError, match="no parameter"):
        build_evaluator("text_matching", threshold=0.3)


def test_text_matching_scores_answer_and_context_separately() -> None:
    lab = lab_of(
        row(
            "pass",
            "The fee is £25 within 30 days.",
            condition='"£25" AND regexp("[0-9]+ days")',
            context="fee £25, 30 days",
        ),
        row("fail", "There is no fee.", condition='"£25"', context="fee £25"),
        row("ctx", "It costs £25.", condition='"£25"', context="unrelated"),
        row("bad", "anything", condition='"£25" AND'),
        row("none", "no condition on this case"),
        row("down", None, condition='"£25"', error="TimeoutError"),
    )
    result = run_evaluator(build_evaluator("text_matching"), lab)
    by_key = {scores.test_case_key: scores for scores in result.rows}
    assert by_key["pass"].scores == {
        "model_passes": 1.0,
        "model_failures": 0.0,
        "model_retrieval_failures": 0.0,
        "model_generation_failures": 0.0,
        "model_parse_failures": 0.0,
    }
    assert by_key["fail"].scores["model_passes"] == 0.0
    assert by_key["ctx"].scores["model_retrieval_failures"] == 1.0
    assert by_key["bad"].scores == {"model_parse_failures": 1.0}
    assert "test case bad" in by_key["bad"].unscored_reason
    assert by_key["none"].unscored_reason == "missing input: output_condition"
    assert by_key["down"].unscored_reason == "host error: TimeoutError"
    passes = result.aggregates["m"]["model_passes"]
    assert (passes.mean, passes.scored, passes.unscored, passes.passed) == (pytest.approx(2 / 3), 3, 3, 2)
    assert result.aggregates["m"]["model_parse_failures"].mean == pytest.approx(0.25)


def test_unscored_cases_are_not_averaged_as_zero(engine: EmbeddingEngine) -> None:
    lab = lab_of(
        row("a", "You can call 0800 555 0142 any day.", expected="Call 0800 555 0142."),
        row("b", None, expected="Call 0800 555 0142.", error="host down"),
        row("c", "An answer without ground truth."),
    )
    result = run_evaluator(build_evaluator("answer_semantic_similarity", Services(lambda: engine)), lab)
    aggregate = result.aggregates["m"]["answer_similarity"]
    assert aggregate.scored == 1 and aggregate.unscored == 2
    assert aggregate.mean == result.rows[0].scores["answer_similarity"] > 0.75


def test_answer_similarity_separates_good_from_bad(engine: EmbeddingEngine) -> None:
    expected = "The Easy Access Saver pays 3.25% AER on balances from £10,000."
    lab = lab_of(
        row("good", "Balances from £10,000 in the Easy Access Saver earn 3.25% AER.", expected=expected),
        row("bad", "Our branches open at 9am on Saturdays.", expected=expected),
    )
    result = run_evaluator(build_evaluator("answer_semantic_similarity", Services(lambda: engine)), lab)
    good, bad = (scores.scores["answer_similarity"] for scores in result.rows)
    assert good >= 0.75 > bad >= 0.0


def test_embedding_work_is_batched_once_per_distinct_text() -> None:
    class Counting:
        def __init__(self) -> None:
            self.seen: list[str] = []

        def embed(self, texts):  # type: ignore[no-untyped-def]
            self.seen.extend(texts)
            return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)

    counting = Counting()
    lab = lab_of(*(row(str(i), "same answer", expected="same truth") for i in range(5)))
    run_evaluator(build_evaluator("answer_semantic_similarity", Services(lambda: counting)), lab)
    # one batched prepare call covering all cases, then per-case lookups
    assert counting.seen[:10] == ["same answer", "same truth"] * 5


def test_threshold_parameter_overrides_the_primary_metric() -> None:
    evaluator = build_evaluator("answer_semantic_similarity", metric_threshold=0.9)
    assert evaluator.threshold("answer_similarity") == 0.9
    assert build_evaluator("text_matching").threshold("model_failures") == 0.5


def test_scored_details_reach_the_row() -> None:
    from dataclasses import dataclass

    from assay.evaluators import Evaluator, Scored

    from assay.models.evaluation import EvaluatorSpec, MetricMeta

    @dataclass
    class Finder(Evaluator):
        spec = EvaluatorSpec(
            id="finder_test",
            display_name="Finder",
            description="d",
            domain="privacy",
            compliance=["x"],
            required_inputs=["actual_output"],
            metrics=[MetricMeta(key="found", display_name="Found", description="d", is_primary=True, threshold=0.5)],
        )
        golden = {"good": {}, "bad": {}}

        def score(self, case):  # type: ignore[no-untyped-def]
            return Scored({"found": 1.0}, {"spans": [[0, 4]]})

    result = run_evaluator(Finder(), lab_of(row("a", "text")))
    assert result.rows[0].scores == {"found": 1.0} and result.rows[0].details == {"spans": [[0, 4]]}


def test_infinite_metric_ranges_round_trip_through_json() -> None:
    from assay.models.evaluation import MetricMeta

    metric = MetricMeta(key="p", display_name="P", description="d", range=(1.0, float("inf")))
    assert MetricMeta.model_validate_json(metric.model_dump_json()).range == (1.0, float("inf"))


def test_a_failing_prepare_marks_cases_instead_of_aborting() -> None:
    class Broken:
        def embed(self, texts):  # type: ignore[no-untyped-def]
            raise RuntimeError("inference failed")

    result = run_evaluator(
        build_evaluator("answer_semantic_similarity", Services(lambda: Broken())), lab_of(row("a", "x", expected="y"))
    )
    assert result.rows[0].unscored_reason == "evaluator error: RuntimeError: inference failed"


def test_embedding_evaluators_of_one_run_share_each_distinct_text() -> None:
    from assay.embeddings import EmbeddingEngine

    encoded: list[str] = []

    class Recording:
        def encode(self, sentences, **kwargs):  # type: ignore[no-untyped-def]
            encoded.extend(sentences)
            return np.ones((len(sentences), 4), dtype=np.float32) / 2

    engine = EmbeddingEngine(loader=lambda _: Recording())
    services = Services(lambda: engine)
    lab = lab_of(*(row(str(i), f"Answer {i % 3}.", expected=f"Truth {i % 2}.") for i in range(6)))
    for evaluator_id in ("answer_semantic_similarity", "answer_semantic_sentence_similarity"):
        run_evaluator(build_evaluator(evaluator_id, services), lab)
    assert sorted(encoded) == sorted({*encoded}) == ["Answer 0.", "Answer 1.", "Answer 2.", "Truth 0.", "Truth 1."]


def test_an_answer_absent_for_a_tool_call_is_unscored_with_that_reason_and_is_no_host_failure() -> None:
    from assay.models import ToolCall

    because = "the last model reply was a tool call (get_weather), not an answer"
    called = row("called", None).model_copy(update={
        "answer_absent": because, "tool_calls": [ToolCall(name="get_weather", arguments={"city": "Paris"},
                                                          final_reply=True)]})  # fmt: skip
    lab = lab_of(called, row("plain", "It is sunny."), row("silent", None))
    assert [item.answered for item in lab.rows] == [True, True, False]
    answers = {scores.test_case_key: scores.unscored_reason
               for scores in run_evaluator(build_evaluator("looping_detection"), lab).rows}  # fmt: skip
    assert answers == {"called": f"missing input: actual_output ({because})", "plain": None,
                       "silent": "missing input: actual_output"}  # fmt: skip
    tools = {scores.test_case_key: scores.unscored_reason
             for scores in run_evaluator(build_evaluator("agent_sanity"), lab).rows}  # fmt: skip
    assert tools["called"] is None


def test_a_result_names_the_package_its_evaluator_came_from() -> None:
    """Assay's own evaluators record Assay and its version; an instance of a class that was never registered (a
    subclass made in a notebook or a test) records its module's package, never Assay's name."""
    from importlib.metadata import version

    from assay.evaluators.registry import evaluator_class

    lab = lab_of(row("a", "the answer", expected="the answer"))
    builtin = run_evaluator(build_evaluator("text_matching"), lab)
    assert builtin.origin is not None
    assert (builtin.origin.package, builtin.origin.version, builtin.origin.entry_point) == (
        "assay", version("assay"), None
    )

    class Tweaked(evaluator_class("text_matching")):  # type: ignore[misc, valid-type]
        pass

    tweaked = run_evaluator(Tweaked(), lab)
    assert tweaked.origin is not None and tweaked.origin.package == "tests"
    assert tweaked.rows == builtin.rows
