"""DeepEval datasets (issue 36, item 4): files written by DeepEval 4.3.1's own EvaluationDataset.save_as
(data/deepeval/README.md says how), every field checked against the values the writer was given."""

import json
from pathlib import Path

import pytest

from assay.formats import FormatError, detect_format, read_file
from assay.formats.ragas import context_id
from assay.models import TestLab, TestSuite

DEEPEVAL = Path(__file__).parent / "data" / "deepeval"
SUFFIXES = ("json", "csv", "jsonl")
REFUND = "All customers are eligible for a 30 day full refund at no extra costs."


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_goldens_import_as_a_suite_with_every_field(suffix: str) -> None:
    imported = read_file(DEEPEVAL / f"deepeval_goldens.{suffix}")
    assert (imported.format, imported.detected, imported.notes) == ("deepeval", True, [])
    suite = imported.content
    assert isinstance(suite, TestSuite) and suite.case_count == 3
    cases = [case for _, case in suite.cases()]
    assert [case.prompt for case in cases] == [
        "What if these shoes don't fit?",
        "Do you ship to Canada, and how long does it take?",
        "Can I pay with PayPal?",
    ]
    assert [case.expected_output for case in cases] == [
        "We offer a 30-day full refund at no extra costs.",
        'Yes: standard shipping to Canada takes 5-7 business days, "express" 2.',
        "",
    ]
    assert [case.reference_contexts for case in cases] == [
        [REFUND],
        ["We ship to the US and Canada.", "Standard shipping: 5-7 business days.\nExpress: 2 days."],
        [],
    ]
    assert cases[1].expected_retrieved_doc_uris == [context_id(text) for text in cases[1].reference_contexts]
    assert len({case.key for case in cases}) == 3


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_answered_goldens_import_as_a_lab_keeping_sources(suffix: str) -> None:
    lab = read_file(DEEPEVAL / f"deepeval_answered.{suffix}", model_key="shop-bot").content
    assert isinstance(lab, TestLab) and [model.key for model in lab.models] == ["shop-bot"]
    first, second = lab.rows
    assert first.actual_output == "You have 30 days to get a full refund at no extra cost."
    assert first.test_case.expected_output == "We offer a 30-day full refund at no extra costs."
    assert [(chunk.text, chunk.doc_uri, chunk.rank) for chunk in first.context] == [(REFUND, context_id(REFUND), 0)]
    assert second.actual_output == "Yes, we ship to Canada, in 5-7 business days."
    assert second.test_case.expected_output == ""
    assert [(chunk.text, chunk.doc_uri) for chunk in second.context] == [
        ("We ship to the US and Canada.", "kb/shipping.md"),  # saved by DeepEval with its source
        ("Standard shipping: 5-7 business days.", context_id("Standard shipping: 5-7 business days.")),
    ]
    assert second.test_case.reference_contexts == ["We ship to the US and Canada."]


def test_the_three_files_of_one_dataset_import_alike() -> None:
    suites = [read_file(DEEPEVAL / f"deepeval_goldens.{suffix}").content for suffix in SUFFIXES]
    labs = [read_file(DEEPEVAL / f"deepeval_answered.{suffix}").content for suffix in SUFFIXES]
    assert [suite.tests[0].test_cases for suite in suites[1:]] == [suites[0].tests[0].test_cases] * 2
    assert [lab.rows for lab in labs[1:]] == [labs[0].rows] * 2


def test_what_cannot_be_carried_is_listed(tmp_path: Path) -> None:
    golden = json.loads((DEEPEVAL / "deepeval_goldens.json").read_text())[0]
    golden |= {"tools_called": [{"name": "refund_policy"}], "expected_tools": [{"name": "refund_policy"}]}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([golden, golden]))
    assert read_file(path).notes == ["tools_called not mapped (2 records)", "expected_tools not mapped (2 records)"]


@pytest.mark.parametrize(
    ("name", "text", "location", "message"),
    [
        ("bad.csv", "input,expected_output\nq,a\n,b\n", "line 3, column input", "field required (expected a string)"),
        (
            "conversation.json",
            json.dumps([{"scenario": "a refund", "turns": [{"role": "user", "content": "hi"}]}]),
            "[0]",
            "a conversational golden (scenario, turns): only single-turn goldens with an input are read",
        ),
        ("bad.jsonl", '{"input": "q", "retrieval_context": 3}\n', "line 1, retrieval_context", "expected"),
    ],
)
def test_bad_goldens_name_file_line_and_field(
    tmp_path: Path, name: str, text: str, location: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(FormatError) as caught:
        read_file(tmp_path / name, "deepeval")
    assert (caught.value.location, caught.value.message.startswith(message)) == (location, True)
    assert "\n" not in str(caught.value)


def test_every_deepeval_file_is_detected() -> None:
    assert {detect_format(path) for path in DEEPEVAL.glob("deepeval_*")} == {"deepeval"}
