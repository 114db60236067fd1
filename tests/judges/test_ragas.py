"""The Ragas-style judged evaluators against the local rule-based judge: formulas checked against hand-computed
values, per-item evidence, and the cases that cannot be scored (no claims, empty context, failed calls)."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from assay.evaluators import Services, _ragas, build_evaluator, run_evaluator
from assay.evaluators.base import CaseContext, Unscored
from assay.evaluators.ragas import PARTS
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.models.judges import JudgeRunOptions
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import judge_services

CONTEXT = "The Easy Access Saver pays 3.25% AER. Interest is paid monthly. There is no minimum deposit."
QUESTION = "What interest rate does the Easy Access Saver pay?"


def _services(server: JudgeServer, engine: EmbeddingEngine, cache: Path | None = None) -> Services:
    services = judge_services(server, cache)
    services.embedder_factory = lambda: engine
    return services


def _row(key: str = "c", *, context: list[str] | None = None, **fields: Any) -> TestLabRow:
    case = TestCase(
        key=key, prompt=fields.pop("question", QUESTION), expected_output=fields.pop("expected", "")
    )  # fmt: skip
    chunks = [RetrievedChunk(text=text, rank=rank, doc_uri=f"doc{rank}") for rank, text in enumerate(context or [])]
    return TestLabRow(test_case=case, model_key="m", actual_output=fields.pop("answer", None), context=chunks)


def _run(evaluator_id: str, services: Services, *rows: TestLabRow, **parameters: Any) -> dict[str, Any]:
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=list(rows))
    result = run_evaluator(build_evaluator(evaluator_id, services, **parameters), lab)
    return {row.test_case_key: row for row in result.rows}


# -- formulas ------------------------------------------------------------------------------------------------


def test_average_precision_weighs_useful_chunks_by_rank() -> None:
    assert _ragas.average_precision([True, False, True]) == round((1 + 2 / 3) / 2, 6)
    assert _ragas.average_precision([False, True]) == 0.5
    assert _ragas.average_precision([True, True, False]) == 1.0
    assert _ragas.average_precision([False, False]) == 0.0


def test_statement_f1_and_harmonic_mean() -> None:
    assert _ragas.statement_f1(2, 1, 1) == round(2 / 3, 6)
    assert _ragas.statement_f1(0, 2, 0) == 0.0
    with pytest.raises(ValueError):
        _ragas.statement_f1(0, 0, 0)
    assert _ragas.harmonic_mean([1.0, 0.5]) == round(2 / 3, 6)
    assert _ragas.harmonic_mean([0.9, 0.0, 1.0]) == 0.0
    assert _ragas.harmonic_mean([0.8, 0.8, 0.8, 0.8]) == 0.8


def test_details_are_bounded_and_count_what_was_left_out() -> None:
    kept = _ragas.bounded("claims", list(range(_ragas.MAX_ITEMS + 7)))
    assert len(kept["claims"]) == _ragas.MAX_ITEMS and kept["claims_omitted"] == 7
    assert "claims_omitted" not in _ragas.bounded("claims", [1, 2])


# -- faithfulness --------------------------------------------------------------------------------------------


def test_faithfulness_is_supported_claims_over_claims_with_each_claim_shown(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    answer = "The Easy Access Saver pays 3.25% AER. Interest is paid monthly. Withdrawals need 90 days notice."
    rows = _run("faithfulness", _services(judge_server, engine), _row(answer=answer, context=[CONTEXT]))
    row = rows["c"]
    assert row.unscored_reason is None
    assert row.scores["faithfulness"] == round(2 / 3, 6)
    claims = row.details["claims"]
    assert [claim["supported"] for claim in claims] == [True, True, False]
    assert claims[2]["claim"] == "Withdrawals need 90 days notice."
    assert row.details["supported_claims"] == 2 and row.details["total_claims"] == 3
    assert [call["step"] for call in row.details["judge"]] == ["claims", "verify"]


def test_faithfulness_catches_a_changed_figure(judge_server: JudgeServer, engine: EmbeddingEngine) -> None:
    rows = _run(
        "faithfulness", _services(judge_server, engine), _row(answer="The Easy Access Saver pays 3.50% AER.",
                                                              context=[CONTEXT])
    )  # fmt: skip
    assert rows["c"].scores["faithfulness"] == 0.0


def test_an_answer_without_claims_or_context_is_unscored_with_the_reason(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    rows = _run(
        "faithfulness",
        _services(judge_server, engine),
        _row("no_claims", answer="It is.", context=[CONTEXT]),
        _row("blank_context", answer="The Easy Access Saver pays 3.25% AER.", context=["   "]),
        _row("no_context", answer="The Easy Access Saver pays 3.25% AER."),
    )
    assert "no factual claim" in rows["no_claims"].unscored_reason
    assert rows["no_claims"].details["judge"]  # the claims call is kept as evidence
    assert rows["no_claims"].scores.get("faithfulness") is None
    assert "retrieved context is empty" in rows["blank_context"].unscored_reason
    assert rows["no_context"].unscored_reason.startswith("missing input")


def test_a_claim_without_a_verdict_makes_the_case_unscored_not_unsupported() -> None:
    async def ask(template_id: str, /, *, step: str = "", **inputs: Any) -> dict:
        if template_id == "ragas_claims":
            return {"rationale": "", "claims": ["A is 1.", "B is 2.", "C is 3."]}
        return {"rationale": "", "verdicts": [{"claim": 1, "supported": True, "reason": ""},
                                              {"claim": 3, "supported": False, "reason": ""},
                                              {"claim": 9, "supported": True, "reason": ""}]}  # fmt: skip

    case = CaseContext.build(actual_output="A is 1. B is 2. C is 3.", retrieved_context=["A is 1."])
    with pytest.raises(Unscored) as raised:
        asyncio.run(_ragas.faithfulness(case, ask))  # type: ignore[arg-type]
    assert "claim(s) 2 of 3" in raised.value.reason
    assert [claim["supported"] for claim in raised.value.details["claims"]] == [True, None, False]


def test_a_refusal_leaves_the_case_unscored(judge_server: JudgeServer, engine: EmbeddingEngine) -> None:
    rows = _run(
        "faithfulness", _services(judge_server, engine), _row(answer="Rates vary. [judge:refusal]", context=[CONTEXT])
    )
    assert rows["c"].unscored_reason.startswith("judge failed (refusal)")
    assert rows["c"].details["judge"][0]["step"] == "claims"


# -- answer correctness --------------------------------------------------------------------------------------


def test_answer_correctness_weighs_statement_f1_and_similarity(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    expected = "The Easy Access Saver pays 3.25% AER. Interest is paid monthly."
    answer = "The Easy Access Saver pays 3.25% AER. Interest is paid yearly by cheque."
    row = _run("answer_correctness", _services(judge_server, engine), _row(answer=answer, expected=expected))["c"]
    assert row.unscored_reason is None
    # TP 1 (the rate), FP 1 (yearly by cheque), FN 1 (monthly): F1 = 1 / (1 + 0.5 * 2) = 0.5
    assert (row.details["true_positives"], row.details["false_positives"], row.details["false_negatives"]) == (1, 1, 1)
    assert row.scores["factual_f1"] == 0.5
    vectors = engine.embed([answer, expected])
    semantic = max(0.0, float(vectors[0] @ vectors[1]))
    assert row.scores["semantic_similarity"] == pytest.approx(semantic, abs=1e-5)
    assert row.scores["answer_correctness"] == pytest.approx(0.75 * 0.5 + 0.25 * semantic, abs=1e-5)
    facts_only = _run(
        "answer_correctness", _services(judge_server, engine), _row(answer=answer, expected=expected),
        factuality_weight=1.0, semantic_weight=0.0,
    )["c"]  # fmt: skip
    assert facts_only.scores["answer_correctness"] == 0.5


def test_answer_correctness_rejects_weights_that_weigh_nothing() -> None:
    with pytest.raises(ValueError, match="not both zero"):
        build_evaluator("answer_correctness", factuality_weight=0.0, semantic_weight=0.0)


# -- answer relevancy ----------------------------------------------------------------------------------------


def test_answer_relevancy_is_the_mean_cosine_of_generated_questions(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    rows = _run(
        "answer_relevancy_llm",
        _services(judge_server, engine),
        _row("on_topic", answer="The Easy Access Saver pays an interest rate of 3.25% AER."),
        _row("evasive", answer="I don't know the rate, sorry."),
        questions=2,
    )
    on_topic = rows["on_topic"]
    generated = [item["question"] for item in on_topic.details["questions"]]
    assert len(generated) == 2
    vectors = engine.embed([QUESTION, *generated])
    expected = sum(max(0.0, float(vectors[0] @ vector)) for vector in vectors[1:]) / 2
    assert on_topic.scores["answer_relevancy"] == pytest.approx(expected, abs=1e-5)
    assert on_topic.scores["answer_relevancy"] >= 0.75
    assert rows["evasive"].scores["answer_relevancy"] == 0.0
    assert rows["evasive"].details["noncommittal"] is True


# -- context precision, recall, relevancy --------------------------------------------------------------------


def test_context_precision_is_average_precision_of_useful_chunks(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    expected = "The Easy Access Saver pays 3.25% AER."
    chunks = [
        "Easy Access Saver: it pays 3.25% AER on all balances.",
        "Branch opening hours are 9am to 5pm.",
        "The Easy Access Saver pays 3.25% AER, variable.",
    ]
    row = _run("context_precision", _services(judge_server, engine), _row(expected=expected, context=chunks))["c"]
    assert row.scores["context_precision"] == round((1 + 2 / 3) / 2, 6)
    assert [chunk["useful"] for chunk in row.details["chunks"]] == [True, False, True]
    assert [chunk["doc_uri"] for chunk in row.details["chunks"]] == ["doc0", "doc1", "doc2"]
    assert sorted(call["step"] for call in row.details["judge"]) == ["chunk 1", "chunk 2", "chunk 3"]


def test_a_failing_chunk_call_leaves_the_case_unscored_with_the_evidence(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    chunks = ["The Easy Access Saver pays 3.25% AER.", "Opening hours [judge:malformed]"]
    row = _run(
        "context_precision", _services(judge_server, engine),
        _row(expected="The Easy Access Saver pays 3.25% AER.", context=chunks),
    )["c"]  # fmt: skip
    assert "unparseable" in row.unscored_reason
    assert row.scores.get("context_precision") is None
    assert any(call.get("error_kind") == "unparseable" for call in row.details["judge"])
    assert any(call.get("verdict") for call in row.details["judge"])  # the good chunk's verdict is kept


def test_context_recall_is_attributed_statements_over_statements(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    expected = "The Easy Access Saver pays 3.25% AER. Withdrawals need 90 days notice."
    row = _run("context_recall", _services(judge_server, engine), _row(expected=expected, context=[CONTEXT]))["c"]
    assert row.scores["context_recall"] == 0.5
    assert [item["attributed"] for item in row.details["statements"]] == [True, False]


def test_context_relevancy_counts_relevant_sentences_over_all_sentences(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    chunks = [
        "The Easy Access Saver pays an interest rate of 3.25% AER. Branches open at 9am.",
        "Parking is free. Mortgage overpayments are free of charge.",
    ]
    row = _run("context_relevancy", _services(judge_server, engine), _row(context=chunks))["c"]
    assert row.scores["context_relevancy"] == 0.25
    assert row.details["total_sentences"] == 4 and row.details["relevant_sentences"] == 1
    assert [item["relevant"] for item in row.details["sentences"]] == [True, False, False, False]


def test_context_relevancy_keeps_at_most_fifty_sentences_in_the_details(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    context = [" ".join(f"Branch {number} opens at {number}am." for number in range(60))]
    row = _run("context_relevancy", _services(judge_server, engine), _row(context=context))["c"]
    assert row.scores["context_relevancy"] == 0.0
    assert row.details["total_sentences"] == 60
    assert len(row.details["sentences"]) == 50 and row.details["sentences_omitted"] == 10


# -- ragas ---------------------------------------------------------------------------------------------------


def test_ragas_is_the_harmonic_mean_of_the_four_parts_as_their_own_evaluators_score_them(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    row = _row(
        answer="The Easy Access Saver pays an interest rate of 3.25% AER. Withdrawals need 90 days notice.",
        expected="The Easy Access Saver pays 3.25% AER. Interest is paid monthly.",
        context=["Branch opening hours are 9am to 5pm.", CONTEXT],
    )
    services = _services(judge_server, engine)
    scored = _run("ragas", services, row)["c"]
    assert scored.unscored_reason is None
    parts = [scored.scores[name] for name in PARTS]
    assert scored.scores["faithfulness"] == 0.5
    assert scored.scores["context_precision"] == 0.5  # the useful chunk is second of two
    assert scored.scores["context_recall"] == 1.0
    assert scored.scores["ragas"] == pytest.approx(4 / sum(1 / value for value in parts), abs=1e-6)
    single = {"faithfulness": "faithfulness", "answer_relevancy_llm": "answer_relevancy",
              "context_precision": "context_precision", "context_recall": "context_recall"}  # fmt: skip
    for evaluator_id, key in single.items():
        assert _run(evaluator_id, services, row)["c"].scores[key] == scored.scores[key]
    assert scored.details["faithfulness"]["claims"] and scored.details["context_precision"]["chunks"]


def test_ragas_is_unscored_naming_the_parts_that_failed_and_keeps_the_others(
    judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    row = _row(
        answer="The Easy Access Saver pays an interest rate of 3.25% AER.",
        expected="The Easy Access Saver pays 3.25% AER. [judge:malformed]",
        context=[CONTEXT],
    )
    scored = _run("ragas", _services(judge_server, engine), row)["c"]
    reason = scored.unscored_reason
    assert reason.startswith("ragas: 2 of 4 parts unscored")
    assert "context_precision: judge failed (unparseable)" in reason and "context_recall: judge failed" in reason
    assert "faithfulness:" not in reason
    assert scored.scores.get("ragas") is None
    assert scored.scores["faithfulness"] == 1.0 and scored.scores["answer_relevancy"] is not None


def test_a_rerun_is_served_from_the_cache(judge_server: JudgeServer, engine: EmbeddingEngine, tmp_path: Path) -> None:
    row = _row(answer="The Easy Access Saver pays 3.25% AER.", expected="It pays 3.25% AER.", context=[CONTEXT])
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=[row])
    first = run_evaluator(build_evaluator("ragas", _services(judge_server, engine, tmp_path)), lab)
    again = run_evaluator(build_evaluator("ragas", _services(judge_server, engine, tmp_path)), lab)
    assert first.judge.account.calls == 5  # claims, verify, questions, one chunk, attribution
    assert again.judge.account.calls == 0 and again.rows[0].scores == first.rows[0].scores


@pytest.mark.parametrize(
    "evaluator_id", ["faithfulness", "answer_correctness", "answer_relevancy_llm", "context_relevancy"]
)
def test_the_cascade_lets_the_offline_proxy_decide_clear_cases(
    evaluator_id: str, judge_server: JudgeServer, engine: EmbeddingEngine
) -> None:
    from assay.evaluators import evaluator_class

    cls = evaluator_class(evaluator_id)
    assert cls.cascade_proxy is not None and evaluator_class(cls.cascade_proxy).spec.primary_metric.threshold
    services = judge_services(judge_server, None, JudgeRunOptions(cascade=True, band=0.01))
    services.embedder_factory = lambda: engine
    evaluator = build_evaluator(evaluator_id, services)
    case = CaseContext.build(**cls.golden["bad"])
    evaluator.prepare([case])
    outcome = score_case(evaluator, case)
    assert outcome.unscored_reason.startswith(f"cascade: decided offline by {cls.cascade_proxy}")
    assert evaluator.judge_summary().account.calls == 0  # type: ignore[union-attr]
