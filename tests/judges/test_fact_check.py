"""Fact-check against the local judge: claims are split, each is checked against the passages retrieved for
it from the case's documents, and the score is the share of claims not refuted."""

import pytest
from assay.evaluators import build_evaluator, evaluator_class, run_evaluator
from assay.evaluators.base import CaseContext
from assay.evaluators.fact_check import best_passages, passages_of

from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import judge_services

DOCUMENTS = [
    "The Easy Saver account pays 2% interest per year, paid monthly. It has no minimum balance.",
    "Withdrawals from Easy Saver are free of charge at any time. Branches open at 9am.",
]


def _run(server: JudgeServer, *cases: tuple[str, list[str]], **parameters: object) -> dict:
    rows = [
        TestLabRow(
            test_case=TestCase(key=f"c{index}", prompt="Tell me about the Easy Saver account."),
            model_key="m",
            actual_output=answer,
            context=[RetrievedChunk(text=text, doc_uri=f"doc{number}") for number, text in enumerate(chunks)],
        )
        for index, (answer, chunks) in enumerate(cases)
    ]
    lab = TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=rows)
    result = run_evaluator(build_evaluator("fact_check", judge_services(server, None), **parameters), lab)
    return {row.test_case_key: row for row in result.rows}


def test_the_metric_is_the_manuals_fact_check() -> None:
    metric = evaluator_class("fact_check").spec.primary_metric
    assert (metric.key, metric.display_name, metric.higher_is_better, metric.threshold) == (
        "fact_check",
        "Fact-check",
        True,
        0.75,
    )


def test_a_true_answer_scores_one_and_a_false_claim_is_refuted_with_its_passages(judge_server: JudgeServer) -> None:
    rows = _run(
        judge_server,
        ("The Easy Saver account pays 2% interest per year. Withdrawals are free of charge.", DOCUMENTS),
        ("The Easy Saver account pays 5% interest per year. Withdrawals are free of charge.", DOCUMENTS),
    )
    assert rows["c0"].scores["fact_check"] == 1.0
    assert rows["c0"].details["verdict_counts"] == {"supported": 2, "refuted": 0, "not_enough_evidence": 0}
    assert rows["c1"].scores["fact_check"] == 0.5
    refuted = rows["c1"].details["claims"][0]
    assert refuted["claim"] == "The Easy Saver account pays 5% interest per year."
    assert refuted["verdict"] == "refuted" and "2" in refuted["rationale"]
    assert refuted["passages"][0]["chunk"] == 0 and refuted["passages"][0]["doc_uri"] == "doc0"
    assert refuted["passages"][0]["text"].startswith("The Easy Saver account pays 2%")
    assert len(refuted["passages"]) <= 3
    steps = sorted(call["step"] for call in rows["c1"].details["judge"])  # claim calls run concurrently
    assert steps == ["claim 0", "claim 1", "claims"]


def test_unrelated_claims_are_not_enough_evidence_and_do_not_lower_the_score(judge_server: JudgeServer) -> None:
    before = judge_server.chat_calls
    row = _run(judge_server, ("Our mobile app supports fingerprint login.", DOCUMENTS))["c0"]
    assert row.scores["fact_check"] == 1.0
    claim = row.details["claims"][0]
    assert claim["verdict"] == "not_enough_evidence" and claim["passages"] == []
    assert judge_server.chat_calls - before == 1  # only the claims call: no passage to show the judge


def test_no_documents_means_unscored_without_asking_the_judge(judge_server: JudgeServer) -> None:
    before = judge_server.chat_calls
    row = _run(judge_server, ("The Easy Saver account pays 2% interest.", []))["c0"]
    assert "no documents to check against" in row.unscored_reason
    assert row.scores.get("fact_check") is None
    assert judge_server.chat_calls == before


def test_a_failed_claim_verdict_leaves_the_case_unscored_with_the_evidence(judge_server: JudgeServer) -> None:
    documents = [DOCUMENTS[0], "Withdrawals from Easy Saver are free of charge [judge:malformed]."]
    row = _run(judge_server, ("The Easy Saver account pays 2% interest per year. Withdrawals are free.", documents))
    case = row["c0"]
    assert case.unscored_reason.startswith("judge failed (unparseable)")
    assert case.scores.get("fact_check") is None
    assert {call["step"] for call in case.details["judge"]} >= {"claims", "claim 1"}


def test_an_answer_without_claims_has_no_false_information(judge_server: JudgeServer) -> None:
    row = _run(judge_server, ("Happy to help!", DOCUMENTS))["c0"]
    assert row.scores["fact_check"] == 1.0 and row.details["claims"] == []
    assert row.details["note"] == "the answer makes no checkable claim"


def test_claims_beyond_the_limit_are_counted_not_checked(judge_server: JudgeServer, monkeypatch) -> None:
    monkeypatch.setattr("assay.evaluators.fact_check.MAX_CLAIMS", 2)
    answer = "Easy Saver pays 2% interest. Withdrawals are free of charge. Easy Saver has no minimum balance."
    row = _run(judge_server, (answer, DOCUMENTS))["c0"]
    assert len(row.details["claims"]) == 2 and row.details["claims_omitted"] == 1


def test_passages_are_ranked_by_similarity_and_bounded() -> None:
    case = CaseContext.build(actual_output="x", retrieved_context=DOCUMENTS)
    passages = passages_of(case)
    assert [passage.chunk for passage in passages] == [0, 0, 1, 1]
    found = best_passages("Withdrawals are free of charge.", passages, limit=1)
    assert len(found) == 1 and found[0][0].text.startswith("Withdrawals from Easy Saver")
    assert best_passages("the and of", passages, limit=3) == []
    with pytest.raises(ValueError, match="passages_per_claim"):
        build_evaluator("fact_check", passages_per_claim=0)
