"""Evaluators keep to the cases they are meant for (issue 25, item 15).

Classification: a short expected answer is not a class label by itself; a model right on all four yes/no
cases of a bank suite scored accuracy 0.556 because five other short answers ("£25.18", an email address...)
were counted as labels it got wrong. Translation and summarization evaluators: they apply only to cases that
declare the task, so bank question answering leaves them out, with the reason.
"""

import json
from pathlib import Path

from assay.evaluators import build_evaluator, evaluator_class, evaluator_ids, run_evaluator
from assay.evaluators.selection import select_evaluators

from assay.models import ModelHost, TestCase, TestLab, TestLabRow, TestSuite

SAMPLE_SUITE = Path(__file__).resolve().parents[2] / "assay" / "data" / "sample_bank" / "suite.json"
TASK_EVALUATORS = {
    "gptscore_machine_translation": "translation",
    "gptscore_summarization_with_reference": "summarization",
    "gptscore_summarization_without_reference": "summarization",
    "summarization_completeness_faithfulness": "summarization",
    "summarization_judge": "summarization",
}
# (key, expected answer, the model's answer): four yes/no questions answered right, five short factual
# answers that are no class labels (one of them answered word for word), and a free-text answer.
CASES = [
    ("overdraft-fee", "No", "No."),
    ("isa-transfer", "Yes", "Yes"),
    ("safe-account", "No", "No, Harbourline never asks you to move money to a safe account."),
    ("freeze-card", "Yes", "Yes, you can freeze it in the app under Cards."),
    ("interest", "£25.18", "About £25.18 in interest."),
    ("complaints", "Email complaints@harbourline-bank.example.", "Email complaints@harbourline-bank.example."),
    ("saver-rate", "3.25% AER", "It pays 3.25% AER."),
    ("dispute", "120 days", "Within 120 days of the transaction."),
    ("branches", "46 branches", "There are 46."),
    ("switch", "A full switch takes 7 working days and is guaranteed.", "Seven working days."),
]


def _lab(cases: list[tuple[str, str, str]], categories: list[str] | None = None) -> TestLab:
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt=f"Question {key}?", expected_output=expected,
                               categories=list(categories or [])),
            model_key="bank-rag",
            actual_output=answer,
        )
        for key, expected, answer in cases
    ]  # fmt: skip
    return TestLab(name="bank", models=[ModelHost(key="bank-rag", type="t")], rows=rows)


def test_a_model_right_on_all_four_yes_no_cases_gets_accuracy_one() -> None:
    result = run_evaluator(build_evaluator("classification"), _lab(CASES))
    accuracy = result.aggregates["bank-rag"]["accuracy"]
    assert (accuracy.mean, accuracy.scored, accuracy.unscored) == (1.0, 4, 6)
    assert result.model_details["bank-rag"]["labels"] == ["no", "yes"]
    reasons = {row.test_case_key: row.unscored_reason for row in result.rows}
    assert reasons["interest"] == (
        "not applicable: the expected answer '£25.18' is no class label: not yes/no or true/false, not a labels "
        "parameter, and the case is not in the category 'classification'"
    )
    assert reasons["switch"] == "not applicable: the expected answer has 10 words, more than a class label (4)"


def test_a_declared_category_or_label_set_makes_a_case_a_classification_case() -> None:
    declared = run_evaluator(build_evaluator("classification"), _lab(CASES[4:6], categories=["classification"]))
    assert declared.aggregates["bank-rag"]["accuracy"].scored == 2
    labelled = run_evaluator(build_evaluator("classification", labels="Yes, No, 3.25% AER"), _lab(CASES))
    assert labelled.aggregates["bank-rag"]["accuracy"].scored == 5
    assert labelled.aggregates["bank-rag"]["accuracy"].mean == 0.8  # "It pays 3.25% AER." is not the label


def test_each_case_decides_alone_so_shards_score_like_one_run() -> None:
    from assay.evaluators.shards import merge_results, shard_lab, unshardable_reason

    evaluator = build_evaluator("classification")
    assert unshardable_reason(evaluator) is None
    whole = run_evaluator(evaluator, _lab(CASES))
    parts = [run_evaluator(build_evaluator("classification"), shard) for shard in shard_lab(_lab(CASES), 3)]
    merged = merge_results(build_evaluator("classification"), _lab(CASES), parts)
    assert merged.model_dump(exclude={"elapsed_s"}) == whole.model_dump(exclude={"elapsed_s"})


def _sample_bank_lab() -> TestLab:
    suite = TestSuite.model_validate_json(SAMPLE_SUITE.read_text(encoding="utf-8"))
    rows = [
        TestLabRow(test_case=case, model_key="bank-rag", actual_output=case.expected_output)
        for _, case in suite.cases()
    ]
    return TestLab(name="sample bank", models=[ModelHost(key="bank-rag", type="t")], rows=rows)


def test_every_task_evaluator_declares_its_task_in_its_spec() -> None:
    declared = {evaluator_id: evaluator_class(evaluator_id).spec.tasks for evaluator_id in evaluator_ids()}
    assert {key: tasks for key, tasks in declared.items() if tasks} == {
        key: [task] for key, task in TASK_EVALUATORS.items()
    }
    spec = json.loads(evaluator_class("summarization_judge").full_spec().model_dump_json())
    assert spec["tasks"] == ["summarization"]  # written into every results file


def test_evaluators_all_on_bank_question_answering_leaves_out_translation_and_summarization() -> None:
    selected, skipped = select_evaluators(_sample_bank_lab(), ["all"])
    for evaluator_id, task in TASK_EVALUATORS.items():
        assert evaluator_id not in selected
        assert skipped[evaluator_id].startswith(f"applies to no test case (the test case does not declare the {task}")
    assert "classification" not in selected  # no closed label set among the bank's answers


def test_question_answering_cases_are_unscored_with_the_reason_next_to_a_summary_case() -> None:
    rows = list(_sample_bank_lab().rows[:3])
    summary = TestCase(
        key="summary",
        prompt="Summarise the overdraft policy.",
        expected_output="Overdrafts cost 39.9% EAR.",
        categories=["summarization"],
    )
    rows.append(TestLabRow(test_case=summary, model_key="bank-rag", actual_output="Arranged overdrafts: 39.9% EAR."))
    lab = TestLab(name="mixed", models=[ModelHost(key="bank-rag", type="t")], rows=rows)
    selected, _ = select_evaluators(lab, ["all"])
    assert "gptscore_machine_translation" not in selected
    result = run_evaluator(build_evaluator("gptscore_summarization_with_reference"), lab)
    reasons = [row.unscored_reason for row in result.rows]
    assert (
        reasons[:3]
        == [
            "not applicable: the test case does not declare the summarization task (a category such as summarisation, "
            "summarise, summarization, summarize, summary)"
        ]
        * 3
    )
    assert reasons[3] is not None and not reasons[3].startswith("not applicable")  # no judge here: unavailable
    assert all(value is None for row in result.rows for value in row.scores.values())
