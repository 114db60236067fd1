"""The Databricks-style judges (seeds 001/003) against the local rule-based judge: ratings, the seeds' per-case
columns and aggregate names in results.json, guidelines, chunk precision and custom judges."""

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from assay.artifacts.evaluation_results import results_document
from assay.evaluators import build_evaluator, evaluator_class, run_evaluator

from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import judge_services

QUESTION = "What is the notice period for the Notice Saver account?"
EXPECTED = "The Notice Saver requires 95 days notice before a withdrawal."


def _row(key: str, answer: str | None, *, context: list[str] = (), **case: Any) -> TestLabRow:  # type: ignore[assignment]
    return TestLabRow(
        test_case=TestCase(key=key, prompt=case.pop("prompt", QUESTION), **case),
        model_key="m",
        actual_output=answer,
        context=[RetrievedChunk(text=text, rank=rank) for rank, text in enumerate(context)],
    )


def _lab(*rows: TestLabRow) -> TestLab:
    return TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=list(rows))


def _run(server: JudgeServer, cache: Path, evaluator_id: str, lab: TestLab, **parameters: Any) -> dict[str, Any]:
    """The results.json document of one evaluator's run, entries by case key."""
    evaluator = build_evaluator(evaluator_id, judge_services(server, cache), **parameters)
    document = results_document(lab, run_evaluator(evaluator, lab))
    document["by_key"] = {entry["key"]: entry for entry in document["results"]}
    return document


SEED_AGGREGATES = {
    "correctness": {"correctness": "response/llm_judged/correctness/rating/percentage"},
    "relevance_to_query": {"relevance_to_query": "response/llm_judged/relevance_to_query/rating/percentage"},
    "groundedness_judge": {"groundedness": "response/llm_judged/groundedness/rating/percentage"},
    "safety": {"safety": "response/llm_judged/safety/rating/average"},
    "guideline_adherence": {
        "guideline_adherence": "response/llm_judged/guideline_adherence/rating/percentage",
        "global_guideline_adherence": "response/llm_judged/global_guideline_adherence/rating/percentage",
    },
    "chunk_relevance": {"chunk_relevance_precision": "retrieval/llm_judged/chunk_relevance/precision/average"},
    "context_sufficiency": {"context_sufficiency": "retrieval/llm_judged/context_sufficiency/rating/percentage"},
    "custom_answer_judge": {"rating": "response/llm_judged/{assessment_name}/rating/percentage"},
    "custom_retrieval_judge": {"precision": "retrieval/llm_judged/{assessment_name}/precision/average"},
}


@pytest.mark.parametrize("evaluator_id", sorted(SEED_AGGREGATES))
def test_aggregate_names_and_direction_follow_the_seeds(evaluator_id: str) -> None:
    spec = evaluator_class(evaluator_id).spec
    assert {metric.key: metric.aggregate_name for metric in spec.metrics} == SEED_AGGREGATES[evaluator_id]
    for metric in spec.metrics:  # "yes" is the good rating everywhere, safety included (yes = safe)
        assert metric.higher_is_better and metric.range == (0.0, 1.0) and metric.threshold == 0.5


def test_cascade_proxies_are_offline_evaluators_that_exist() -> None:
    proxies = {name: evaluator_class(name).cascade_proxy for name in SEED_AGGREGATES}  # type: ignore[attr-defined]
    assert proxies == {
        "correctness": "answer_semantic_similarity",
        "relevance_to_query": "answer_relevancy_sentence_similarity",
        "groundedness_judge": "groundedness",
        **{name: None for name in SEED_AGGREGATES if name not in ("correctness", "relevance_to_query",
                                                                   "groundedness_judge")},
    }  # fmt: skip
    for proxy in filter(None, proxies.values()):
        assert "llm" not in evaluator_class(proxy).spec.needs


def test_correctness_rates_yes_and_no_with_the_seed_columns_and_a_failed_case_carries_its_error(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    lab = _lab(
        _row(
            "right", "You must give 95 days notice before you withdraw from the Notice Saver.", expected_output=EXPECTED
        ),
        _row("wrong", "There is no notice period on the Notice Saver.", expected_output=EXPECTED),
        _row("broken", "95 days notice. [judge:malformed]", expected_output=EXPECTED),
        _row("no_truth", "95 days."),
    )
    document = _run(judge_server, tmp_path, "correctness", lab)
    right, wrong, broken, no_truth = (document["by_key"][key] for key in ("right", "wrong", "broken", "no_truth"))
    prefix = "response/llm_judged/correctness"
    assert (right["correctness"], right[f"{prefix}/rating"], right[f"{prefix}/error_message"]) == (1.0, "yes", None)
    assert (wrong["correctness"], wrong[f"{prefix}/rating"]) == (0.0, "no")
    assert "95" in wrong[f"{prefix}/rationale"]  # the rationale names the missing figure
    assert broken["correctness"] is None and broken[f"{prefix}/rating"] is None
    assert "unparseable" in broken[f"{prefix}/error_message"] and broken["unscored_reason"].startswith("judge failed")
    assert no_truth[f"{prefix}/error_message"] == no_truth["unscored_reason"] == "missing input: expected_output"
    assert no_truth[f"{prefix}/rating"] is None
    assert right["details"]["judge"][0]["template"] == "databricks_correctness"  # details are kept as they were
    meta = document["evaluator"]["metrics_meta"][0]
    assert meta["aggregate_name"] == "response/llm_judged/correctness/rating/percentage"
    leaderboard = document["evaluator"]["explanations"][0]["data"]["m"]["correctness"]
    assert leaderboard["mean"] == 0.5 and leaderboard["scored"] == 2


def test_a_refused_judgement_leaves_the_case_unscored_with_the_refusal_as_error(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    lab = _lab(_row("refused", "Fine [judge:refusal]", prompt="How do I close my account?"))
    entry = _run(judge_server, tmp_path, "safety", lab)["by_key"]["refused"]
    assert entry["safety"] is None and entry["response/llm_judged/safety/rating"] is None
    assert "refusal" in entry["response/llm_judged/safety/error_message"]


def test_safety_relevance_and_groundedness_judge_each_answer(judge_server: JudgeServer, tmp_path: Path) -> None:
    context = ["The Notice Saver requires 95 days notice before a withdrawal and pays 4.1% AER."]
    lab = _lab(
        _row("good", "The Notice Saver needs 95 days notice before a withdrawal.", context=context),
        _row("bad", "Only an idiot asks that. The Notice Saver pays 6% AER with 10 days notice.", context=context),
    )
    expected = {"safety": (1.0, 0.0), "relevance_to_query": (1.0, 1.0), "groundedness_judge": (1.0, 0.0)}
    for evaluator_id, (good, bad) in expected.items():
        document = _run(judge_server, tmp_path, evaluator_id, lab)
        key = evaluator_class(evaluator_id).spec.primary_metric.key
        assert (document["by_key"]["good"][key], document["by_key"]["bad"][key]) == (good, bad), evaluator_id
        name = "groundedness" if evaluator_id == "groundedness_judge" else evaluator_id
        rating = document["by_key"]["bad"][f"response/llm_judged/{name}/rating"]
        assert rating == ("yes" if bad else "no")
    off_topic = _lab(_row("off", "We sell travel insurance and open branches at nine."))
    assert _run(judge_server, tmp_path, "relevance_to_query", off_topic)["by_key"]["off"]["relevance_to_query"] == 0.0


def test_guideline_adherence_rates_case_and_global_guidelines_separately(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    own = ["The response must mention the 95 days notice"]
    lab = _lab(
        _row("both_kept", "The Notice Saver needs 95 days notice.", guidelines=own),
        _row("global_broken", "Barclays has no notice, but the Notice Saver needs 95 days notice.", guidelines=own),
        _row("own_broken", "Give notice before you withdraw.", guidelines=own),
        _row("global_only", "Ask Barclays."),
    )
    global_guidelines = ["The response must be in English", "The response must not mention Barclays"]
    document = _run(judge_server, tmp_path, "guideline_adherence", lab, global_guidelines=global_guidelines)
    values = {key: (entry["guideline_adherence"], entry["global_guideline_adherence"])
              for key, entry in document["by_key"].items()}  # fmt: skip
    assert values == {
        "both_kept": (1.0, 1.0),
        "global_broken": (1.0, 0.0),
        "own_broken": (0.0, 1.0),
        "global_only": (None, 0.0),
    }
    broken = document["by_key"]["global_broken"]
    assert broken["response/llm_judged/global_guideline_adherence/rating"] == "no"
    assert "[2]" in broken["response/llm_judged/global_guideline_adherence/rationale"]  # the second global rule
    assert broken["response/llm_judged/guideline_adherence/rating"] == "yes"
    assert document["by_key"]["global_only"]["unscored_reason"] is None
    assert "response/llm_judged/guideline_adherence/rating" not in document["by_key"]["global_only"]
    without_any = _run(judge_server, tmp_path, "guideline_adherence", _lab(_row("none", "Hello.")))["by_key"]["none"]
    assert without_any["unscored_reason"].startswith("not applicable: no guidelines to check")
    assert without_any["response/llm_judged/guideline_adherence/error_message"] == without_any["unscored_reason"]


def test_chunk_relevance_precision_is_relevant_over_retrieved(judge_server: JudgeServer, tmp_path: Path) -> None:
    chunks = [
        "The Notice Saver notice period is 95 days.",
        "Notice Saver accounts: the notice period applies to every withdrawal.",
        "Our branches open at nine on weekdays.",
    ]
    lab = _lab(
        _row("three", None, context=chunks), _row("flaky_chunk", None, context=[*chunks[1:], "x [judge:malformed]"])
    )
    document = _run(judge_server, tmp_path, "chunk_relevance", lab)
    entry, partial = document["by_key"]["three"], document["by_key"]["flaky_chunk"]
    prefix = "retrieval/llm_judged/chunk_relevance"
    assert (
        entry["chunk_relevance_precision"] == pytest.approx(2 / 3) and round(entry[f"{prefix}/precision"], 3) == 0.667
    )
    assert entry[f"{prefix}/ratings"] == ["yes", "yes", "no"]
    assert all(entry[f"{prefix}/rationales"]) and entry[f"{prefix}/error_messages"] == [None, None, None]
    # a chunk the judge could not rate is listed with its error and left out of the precision
    assert partial[f"{prefix}/ratings"] == ["yes", "no", None]
    assert partial[f"{prefix}/rationales"][2] is None and "unparseable" in partial[f"{prefix}/error_messages"][2]
    assert partial["chunk_relevance_precision"] == 0.5 and partial["details"]["chunks"] == {"retrieved": 3, "rated": 2}
    aggregate = document["evaluator"]["explanations"][0]["data"]["m"]["chunk_relevance_precision"]
    assert aggregate["mean"] == pytest.approx((2 / 3 + 0.5) / 2, abs=1e-6)


def test_context_sufficiency_reports_under_retrieval_and_names_what_is_missing(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    lab = _lab(
        _row("enough", None, expected_output=EXPECTED, context=["Notice Saver: 95 days notice before a withdrawal."]),
        _row("short", None, expected_output=EXPECTED, context=["Notice Saver: notice is needed before a withdrawal."]),
        _row("no_context", None, expected_output=EXPECTED),
    )
    document = _run(judge_server, tmp_path, "context_sufficiency", lab)
    prefix = "retrieval/llm_judged/context_sufficiency"
    enough, short, no_context = (document["by_key"][key] for key in ("enough", "short", "no_context"))
    assert (enough["context_sufficiency"], enough[f"{prefix}/rating"]) == (1.0, "yes")
    assert (short["context_sufficiency"], short[f"{prefix}/rating"]) == (0.0, "no")
    assert "95" in short[f"{prefix}/rationale"]
    assert no_context[f"{prefix}/error_message"] == "missing input: retrieved_context"


def test_a_custom_answer_judge_uses_the_prompt_and_its_assessment_name(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    prompt = (
        "Does the response give the notice period the expected answer gives?\n{request}\n{response}\n"
        "{expected_response}"
    )
    lab = _lab(
        _row("kept", "The Notice Saver needs 95 days notice before a withdrawal.", expected_output=EXPECTED),
        _row("lost", "The Notice Saver needs 30 days notice before a withdrawal.", expected_output=EXPECTED),
        _row("no_truth", "The Notice Saver needs 95 days notice."),
    )
    document = _run(judge_server, tmp_path, "custom_answer_judge", lab, assessment_name="notice_period", prompt=prompt)
    prefix = "response/llm_judged/notice_period"
    kept, lost = document["by_key"]["kept"], document["by_key"]["lost"]
    assert (kept["rating"], kept[f"{prefix}/rating"], lost["rating"], lost[f"{prefix}/rating"]) == (
        1.0,
        "yes",
        0.0,
        "no",
    )
    assert document["by_key"]["no_truth"][f"{prefix}/error_message"].startswith("missing input: expected_output")
    assert document["evaluator"]["metrics_meta"][0]["aggregate_name"] == f"{prefix}/rating/percentage"
    call = kept["details"]["judge"][0]
    assert call["template"] == "databricks_custom_answer"
    assert call["template_version"] == hashlib.sha256(prompt.encode()).hexdigest()[:12]
    user = next(message["content"] for message in call["messages"] if message["role"] == "user")
    assert "the notice period the expected answer gives" in user and f"<expected_response>\n{EXPECTED}\n" in user


def test_a_custom_retrieval_judge_rates_each_chunk(judge_server: JudgeServer, tmp_path: Path) -> None:
    prompt = "Does {{ retrieved_context }} state a fact of {{ expected_response }}?"
    chunks = ["The notice period is 95 days for the Notice Saver.", "Branches open at nine."]
    lab = _lab(_row("c", None, expected_output=EXPECTED, context=chunks))
    document = _run(judge_server, tmp_path, "custom_retrieval_judge", lab, assessment_name="has_fact", prompt=prompt)
    entry = document["by_key"]["c"]
    assert entry["retrieval/llm_judged/has_fact/ratings"] == ["yes", "no"]
    assert entry["retrieval/llm_judged/has_fact/precision"] == entry["precision"] == 0.5
    assert (
        document["evaluator"]["metrics_meta"][0]["aggregate_name"] == "retrieval/llm_judged/has_fact/precision/average"
    )


@pytest.mark.parametrize(
    ("evaluator_id", "parameters", "named", "says"),
    [
        ("custom_answer_judge", {"prompt": "Is {{ answer }} polite? {{ response }}"}, "'prompt'", "['answer']"),
        ("custom_answer_judge", {"prompt": "Is {{ request }} a question?"}, "'prompt'", "must use {{ response }}"),
        ("custom_answer_judge", {"prompt": "  "}, "'prompt'", "empty"),
        ("custom_answer_judge", {"prompt": "{{ response | upper }} ok?"}, "'prompt'", "without filters"),
        ("custom_answer_judge", {"prompt": "{% if x %}{{ response }}{% endif %}"}, "'prompt'", "statements"),
        ("custom_answer_judge", {"assessment_name": "Is Polite"}, "'assessment_name'", "'Is Polite'"),
        ("custom_retrieval_judge", {"prompt": "Is {{ response }} good?"}, "'prompt'", "{{ retrieved_context }}"),
    ],
)
def test_a_bad_custom_prompt_is_a_clear_error_naming_the_parameter(
    evaluator_id: str, parameters: dict[str, str], named: str, says: str
) -> None:
    with pytest.raises(ValueError, match="parameter") as raised:
        build_evaluator(evaluator_id, **parameters)
    assert named in str(raised.value) and says in str(raised.value) and evaluator_id in str(raised.value)


def test_guideline_adherence_judges_a_later_turn_with_the_conversation_before_it(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    """A production session's second request: "do not repeat an earlier answer" can only be judged with the
    conversation, which the judge is sent with the last turn."""
    from assay.models import ConversationTurn

    said = "The Notice Saver needs 95 days notice."
    history = [ConversationTurn(role="user", content=QUESTION), ConversationTurn(role="assistant", content=said)]
    rule = ["The response must not repeat an earlier answer"]
    lab = _lab(
        _row("repeats", said, prompt="And for the Easy Saver?", turns=history, guidelines=rule),
        _row("answers", "The Easy Saver has no notice period.", prompt="And for the Easy Saver?", turns=history,
             guidelines=rule),
        _row("first_turn", said, guidelines=rule),
    )  # fmt: skip
    document = _run(judge_server, tmp_path, "guideline_adherence", lab)
    assert {key: entry["guideline_adherence"] for key, entry in document["by_key"].items()} == {
        "repeats": 0.0, "answers": 1.0, "first_turn": 1.0,
    }  # fmt: skip
    prompts = [json.dumps(request.body) for request in judge_server.requests]
    assert any(f"assistant: {said}" in prompt and "And for the Easy Saver?" in prompt for prompt in prompts)
