"""BYOP against the local judge: the user's prompt is the template sent, its hash the version recorded, and a
prompt that cannot be used fails when the evaluator is built."""

import hashlib
from pathlib import Path

import pytest
from assay.evaluators import build_evaluator, evaluator_class, run_evaluator

from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer
from tests.judges.conftest import judge_services

REFERENCE_PROMPT = """Compare the actual answer with the expected answer.
Expected: <expected_answer>
{expected_answer}
</expected_answer>
Actual: <actual_answer>
{actual_answer}
</actual_answer>
Reply true when the actual answer states the expected answer's facts, false otherwise."""


def _lab(*rows: dict) -> TestLab:
    return TestLab(
        name="lab",
        models=[ModelHost(key="m", type="t")],
        rows=[
            TestLabRow(
                test_case=TestCase(key=f"c{index}", prompt=row.get("question", "What is the ATM withdrawal limit?"),
                                   expected_output=row.get("expected", "")),
                model_key="m",
                actual_output=row["answer"],
                context=[RetrievedChunk(text=text) for text in row.get("context", [])],
            )
            for index, row in enumerate(rows)
        ],
    )  # fmt: skip


def _rows(server: JudgeServer, lab: TestLab, cache: Path | None = None, **parameters: object):
    result = run_evaluator(build_evaluator("byop", judge_services(server, cache), **parameters), lab)
    return {row.test_case_key: row for row in result.rows}, result


def test_metric_names_are_the_manuals() -> None:
    spec = evaluator_class("byop").spec
    assert [metric.display_name for metric in spec.metrics] == [
        "Model passes", "Model failures", "Model retrieval failures", "Model generation failures",
        "Model parse failures"]  # fmt: skip
    assert spec.primary_metric.key == "model_passes" and spec.primary_metric.threshold == 0.5


def test_the_users_prompt_judges_each_case_and_its_hash_is_the_recorded_version(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    expected = "The daily ATM withdrawal limit is 500 dollars."
    lab = _lab({"expected": expected, "answer": "You can withdraw 500 dollars daily at the ATM; that is the limit."},
               {"expected": expected, "answer": "Our branches open at nine."})  # fmt: skip
    rows, result = _rows(judge_server, lab, tmp_path, prompt=REFERENCE_PROMPT)
    assert rows["c0"].scores["model_passes"] == 1.0 and rows["c0"].scores["model_failures"] == 0.0
    assert rows["c1"].scores["model_passes"] == 0.0 and rows["c1"].scores["model_generation_failures"] == 1.0
    version = hashlib.sha256(REFERENCE_PROMPT.encode()).hexdigest()[:12]
    call = rows["c1"].details["judge"][0]
    assert call["template"] == "byop" and call["template_version"] == version
    user = call["messages"][-1]["content"]
    assert user.startswith("Compare the actual answer with the expected answer.")
    assert "<expected_answer>\nThe daily ATM withdrawal limit is 500 dollars.\n</expected_answer>" in user
    assert result.judge.templates == {"byop": version}
    assert rows["c1"].details["verdict"]["passed"] is False and rows["c1"].details["verdict"]["rationale"]
    other = build_evaluator("byop", prompt=REFERENCE_PROMPT + " Be strict.")
    assert other._template.version != version  # a different prompt never reuses cached verdicts


def test_the_default_prompt_checks_the_answer_addresses_the_question(judge_server: JudgeServer) -> None:
    rows, _ = _rows(judge_server, _lab({"answer": "The ATM withdrawal limit is 500 dollars."},
                                      {"answer": "I like hiking."}))  # fmt: skip
    assert rows["c0"].scores["model_passes"] == 1.0 and rows["c1"].scores["model_passes"] == 0.0


def test_each_retrieved_chunk_is_judged_in_the_answers_place_and_a_failing_chunk_call_is_listed(
    judge_server: JudgeServer,
) -> None:
    lab = _lab(
        {"answer": "The ATM withdrawal limit is 500 dollars.", "context": ["The ATM withdrawal limit is 500.",
                                                                            "Cafeteria menus change weekly."]},
        {"answer": "The ATM withdrawal limit is 500 dollars.", "context": ["ATM withdrawal limit: 500 dollars."]},
        {"answer": "The ATM withdrawal limit is 500 dollars.", "context": ["Limits apply [judge:malformed]"]},
    )  # fmt: skip
    rows, _ = _rows(judge_server, lab)
    assert rows["c0"].scores["model_retrieval_failures"] == 1.0
    assert rows["c0"].details["retrieved_context"]["flagged_chunks"] == [1]
    assert rows["c1"].scores["model_retrieval_failures"] == 0.0
    broken = rows["c2"]
    assert broken.scores["model_passes"] == 1.0 and broken.scores["model_retrieval_failures"] is None
    assert broken.details["retrieved_context"]["unjudged_chunks"] == [0]
    assert "unparseable" in broken.details["retrieved_context"]["reason"]


def test_a_prompt_about_the_context_judges_it_as_a_whole(judge_server: JudgeServer) -> None:
    prompt = "Is every claim of <actual_answer>{actual_answer}</actual_answer> stated in " \
             "<retrieved_context>{retrieved_context}</retrieved_context>?"  # fmt: skip
    lab = _lab({"answer": "The limit is 500 dollars.", "context": ["The limit is 500 dollars a day."]},
               {"answer": "The limit is 900 euros.", "context": ["The limit is 500 dollars a day."]})  # fmt: skip
    rows, _ = _rows(judge_server, lab, prompt=prompt)
    assert rows["c0"].scores["model_passes"] == 1.0 and rows["c1"].scores["model_passes"] == 0.0
    assert rows["c0"].scores["model_retrieval_failures"] is None and len(rows["c0"].details["judge"]) == 1


def test_a_case_without_an_input_the_prompt_uses_is_not_applicable(judge_server: JudgeServer) -> None:
    rows, _ = _rows(judge_server, _lab({"answer": "500 dollars."}), prompt=REFERENCE_PROMPT)
    assert rows["c0"].unscored_reason == "not applicable: the prompt uses expected_output, which this case lacks"
    assert all(value is None for value in rows["c0"].scores.values())


def test_refusals_and_unparseable_replies_are_unscored_never_zero(judge_server: JudgeServer) -> None:
    rows, _ = _rows(judge_server, _lab({"answer": "The ATM limit is 500 [judge:refusal]"},
                                           {"answer": "The ATM limit is 500 [judge:malformed]"}))  # fmt: skip
    assert rows["c0"].unscored_reason.startswith("judge failed (refusal)")
    assert rows["c0"].scores.get("model_passes") is None
    assert rows["c1"].unscored_reason.startswith("judge failed (unparseable)")
    assert rows["c1"].scores == {"model_parse_failures": 1.0}


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("Judge {answer} now.", r"parameter 'prompt': unknown variable\(s\) \['answer'\]"),
        ("Judge {{ actual_answer } now.", r"parameter 'prompt': template syntax error at line 1"),
        ("Judge {{ context }}.", r"parameter 'prompt': unknown variable\(s\) \['context'\]"),
        ("   ", r"parameter 'prompt' is empty"),
    ],
)
def test_an_unusable_prompt_fails_at_build_time_naming_the_parameter(prompt: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_evaluator("byop", prompt=prompt)


def test_parameters_round_trip_with_a_custom_prompt() -> None:
    evaluator = build_evaluator("byop", prompt=REFERENCE_PROMPT, metric_threshold=0.8)
    again = build_evaluator("byop", **evaluator.parameters())
    assert again.parameters() == evaluator.parameters() and again.threshold("model_passes") == 0.8
    assert again._template.inputs == ("actual_answer", "expected_answer")
