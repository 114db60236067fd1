"""GPTScore against the local judge's completions route: the judge's prompt log-probabilities (a token seen
earlier in the prompt -0.1, an unseen one -3.0) make a hypothesis that restates the reference likely."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.evaluators import build_evaluator, evaluator_class, run_evaluator
from assay.evaluators._gptscore import Prompt, split_prompt

from assay.judges.client import CallFailed
from assay.judges.logprobs import NO_LOGPROBS, scored_tokens
from assay.models import ConversationTurn, ModelHost, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import judge_services

REFERENCE = "The branch opens at nine on weekdays and closes at five."


@pytest.fixture(scope="module")
def chat_only_judge() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer(logprobs=False)) as running:
        yield running


def _lab(rows: list[dict]) -> TestLab:
    return TestLab(
        name="lab",
        models=[ModelHost(key="m", type="t")],
        rows=[
            TestLabRow(
                test_case=TestCase(key=f"c{index}", prompt=row.get("question", "q"),
                                   expected_output=row.get("expected", ""), turns=row.get("turns", []),
                                   categories=["summarization", "translation"]),  # the tasks they apply to
                model_key="m",
                actual_output=row["answer"],
            )
            for index, row in enumerate(rows)
        ],
    )  # fmt: skip


def _run(evaluator_id: str, server: JudgeServer, cache: Path | None, rows: list[dict]):
    result = run_evaluator(build_evaluator(evaluator_id, judge_services(server, cache)), _lab(rows))
    return {row.test_case_key: row for row in result.rows}, result


def test_metrics_are_the_manuals_and_lower_is_better() -> None:
    expected = {
        "gptscore_machine_translation": ["accuracy", "fluency", "multidimensional_quality_metrics"],
        "gptscore_question_answering": ["interest", "engagement", "understandability", "relevance", "specific",
                                        "correctness", "semantically_appropriate", "fluency"],
        "gptscore_summarization_with_reference": ["semantic_coverage", "factuality", "informativeness", "coherence",
                                                  "relevance", "fluency"],
        "gptscore_summarization_without_reference": ["semantic_coverage", "factuality", "consistency",
                                                     "informativeness", "coherence", "relevance", "fluency"],
    }  # fmt: skip
    for evaluator_id, keys in expected.items():
        spec = evaluator_class(evaluator_id).spec
        assert [metric.key for metric in spec.metrics] == keys
        assert spec.primary_metric.key == keys[0]
        assert all(not metric.higher_is_better and metric.range == (0.0, float("inf")) for metric in spec.metrics)
        assert all(metric.threshold == float("inf") for metric in spec.metrics)  # the manual's: never a problem
    assert (
        evaluator_class("gptscore_machine_translation").spec.metric("multidimensional_quality_metrics").display_name
        == "Multidimensional Quality Metrics"
    )


def test_a_faithful_translation_scores_a_lower_nll_than_an_unrelated_one_both_ways(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    rows, result = _run("gptscore_machine_translation", judge_server, tmp_path, [
        {"expected": REFERENCE, "answer": REFERENCE},
        {"expected": REFERENCE, "answer": "Purple elephants sing loudly during winter storms."},
    ])  # fmt: skip
    good, bad = rows["c0"], rows["c1"]
    assert good.unscored_reason is None and bad.unscored_reason is None
    assert good.scores["accuracy"] == pytest.approx(0.1)
    assert bad.scores["accuracy"] > 2.0  # mostly unseen words, in both directions
    assert result.aggregates["m"]["accuracy"].passed == 2  # the manual's +inf threshold reports no problem
    directions = [entry["direction"] for entry in bad.details["gptscore"]["fluency"]]
    assert directions == ["expected answer -> actual answer", "actual answer -> expected answer"]
    calls = bad.details["judge"]
    assert len(calls) == 6 and {call["template"] for call in calls} == {
        "gptscore_mt_accuracy", "gptscore_mt_fluency", "gptscore_mt_mqm"}  # fmt: skip
    first = calls[0]
    assert first["template_version"] == "1" and first["step"].startswith("accuracy: ")
    prompt = first["messages"][0]["content"]
    assert prompt.startswith("Rewrite the following text with its core information and consistent facts: ")
    assert prompt.endswith("In other words, Purple elephants sing loudly during winter storms.")
    scored = json.loads(first["raw_reply"])["tokens"]
    assert "".join(scored).strip() == "Purple elephants sing loudly during winter storms."
    sent = [request.body for request in judge_server.requests if request.path == "/v1/completions"][-1]
    assert sent["echo"] is True and sent["logprobs"] == 1
    assert result.judge is not None and result.judge.templates["gptscore_mt_mqm"] == "1"


def test_a_rerun_is_served_from_the_cache(judge_server: JudgeServer, tmp_path: Path) -> None:
    rows = [{"expected": REFERENCE, "answer": "The branch opens at nine."}]
    _, first = _run("gptscore_summarization_with_reference", judge_server, tmp_path, rows)
    again, second = _run("gptscore_summarization_with_reference", judge_server, tmp_path, rows)
    assert first.judge.account.calls == 12 and second.judge.account.calls == 0
    assert second.judge.account.cache_hits == 12 and all(call["cached"] for call in again["c0"].details["judge"])


def test_summaries_without_reference_are_scored_after_tldr(judge_server: JudgeServer) -> None:
    source = "Summarise: the savings rate rises to 3.25% from May for every existing customer."
    rows, _ = _run("gptscore_summarization_without_reference", judge_server, None, [
        {"question": source, "answer": "The savings rate rises to 3.25% from May."},
        {"question": source, "answer": "Jazz festivals feature purple umbrellas."},
    ])  # fmt: skip
    assert rows["c0"].scores["semantic_coverage"] < 1.0 < rows["c1"].scores["semantic_coverage"]
    assert len(rows["c0"].scores) == 7 and len(rows["c0"].details["judge"]) == 7
    assert "\nTl;dr\nThe savings rate" in rows["c0"].details["judge"][0]["messages"][0]["content"]


def test_question_answering_scores_the_answer_yes_tokens_after_the_conversation(judge_server: JudgeServer) -> None:
    turns = [ConversationTurn(role="user", content="Hello"), ConversationTurn(role="assistant", content="Hi!")]
    rows, _ = _run("gptscore_question_answering", judge_server, None, [
        {"question": "What is the ATM limit?", "answer": "It is 500 dollars a day.", "turns": turns},
    ])  # fmt: skip
    row = rows["c0"]
    assert row.unscored_reason is None and len(row.scores) == 8
    call = row.details["judge"][0]
    assert (
        "Conversation:\nHuman: Hello\nAI: Hi!\nHuman: What is the ATM limit?\nAI: It is 500 dollars a day."
        in (call["messages"][0]["content"])
    )
    assert "".join(json.loads(call["raw_reply"])["tokens"]).strip() == "Answer: Yes"


def test_a_chat_only_judge_makes_every_case_unavailable_with_the_reason(chat_only_judge: JudgeServer) -> None:
    services = judge_services(chat_only_judge, None)
    evaluator = build_evaluator("gptscore_machine_translation", services)
    reason = evaluator.unavailable_reason()
    assert reason is not None and reason.startswith(NO_LOGPROBS) and "404" in reason
    result = run_evaluator(evaluator, _lab([{"expected": REFERENCE, "answer": REFERENCE}] * 2))
    assert [row.unscored_reason for row in result.rows] == [reason, reason]
    assert all(value is None for row in result.rows for value in row.scores.values())
    # the probe is remembered on the client: a second evaluator of the run asks nothing more
    other = build_evaluator("gptscore_question_answering", services)
    assert other.unavailable_reason() == reason and services.judge._logprobs_unavailable == reason


def test_unreadable_log_probabilities_leave_only_that_case_unscored(judge_server: JudgeServer) -> None:
    rows, result = _run("gptscore_machine_translation", judge_server, None, [
        {"expected": REFERENCE, "answer": REFERENCE},
        {"expected": REFERENCE, "answer": "Opens at nine [judge:malformed]"},
    ])  # fmt: skip
    assert rows["c0"].unscored_reason is None
    assert rows["c1"].unscored_reason.startswith("judge failed (unparseable)")
    assert rows["c1"].scores.get("accuracy") is None and rows["c1"].details["judge"][0]["raw_reply"]
    assert result.aggregates["m"]["accuracy"].scored == 1


def test_prompts_split_where_scoring_starts() -> None:
    both = Prompt("x", {"ref_hypo": "Ref text.", "hypo_ref": "Hypo text."}, "hypo_ref")
    assert split_prompt("gptscore_mt_fluency", both) == (
        "Rewrite the following text to make it more grammatical and well-written: Ref text. In other words,",
        " Hypo text.",
    )
    prefix, continuation = split_prompt("gptscore_qa_fluency", Prompt("c", {"history": "Human: a\nAI: b"}, None))
    assert prefix.endswith("AI: b") and continuation == "\nAnswer: Yes"
    # the hypothesis repeating the cue does not move the split
    tricky = Prompt("x", {"ref_hypo": "A.", "hypo_ref": "In other words, B."}, "hypo_ref")
    assert split_prompt("gptscore_sumref_fluency", tricky)[1] == " In other words, B."


def test_scored_tokens_skip_the_prefix_and_the_generated_token() -> None:
    logprobs = {
        "tokens": ["a ", "b ", "c", "!"],
        "token_logprobs": [None, -1.0, -2.0, -5.0],
        "text_offset": [0, 2, 4, 5],
    }
    assert scored_tokens(logprobs, 2, 5) == (["b ", "c"], [-1.0, -2.0])
    with pytest.raises(CallFailed, match="no usable log-probability"):
        scored_tokens(logprobs, 0, 5)
    with pytest.raises(CallFailed, match="no token"):
        scored_tokens(logprobs, 5, 5)
    with pytest.raises(CallFailed, match="lacks"):
        scored_tokens({"tokens": "?"}, 0, 1)
