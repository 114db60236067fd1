"""Ragas reference contexts and context ids survive import and export, and a retrieval evaluator scores them."""

import json
from pathlib import Path

import pytest
from assay.evaluators import build_evaluator, run_evaluator
from assay.evaluators.selection import select_evaluators

from assay.formats.errors import FormatError
from assay.formats.ragas import context_id, export_ragas, import_ragas
from assay.models import TestLab, TestSuite

RATE = "The Easy Access Saver pays 3.25% AER."
LIMIT = "Withdrawals from the Easy Access Saver are free and unlimited."
HOURS = "Branches open at 9am on Saturdays."
SAMPLES = [
    {  # one of the two reference contexts was retrieved (with other whitespace around it)
        "user_input": "What does the Easy Access Saver pay, and can I withdraw?",
        "retrieved_contexts": [f"  {RATE}\n", HOURS],
        "response": "It pays 3.25% AER.",
        "reference": "3.25% AER, and withdrawals are free.",
        "reference_contexts": [RATE, LIMIT],
    },
    {  # the file's own ids, as Ragas's id-based metrics use them
        "user_input": "When do branches open on Saturdays?",
        "retrieved_contexts": [HOURS],
        "retrieved_context_ids": ["kb://branches#0"],
        "response": "At 9am.",
        "reference": "9am.",
        "reference_context_ids": ["kb://branches#0"],
    },
]


@pytest.fixture(scope="module")
def samples_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ragas") / "contexts.jsonl"
    path.write_text("".join(json.dumps(sample) + "\n" for sample in SAMPLES))
    return path


def test_reference_contexts_are_kept_and_passages_get_ids(samples_file: Path) -> None:
    lab = import_ragas(samples_file)
    assert isinstance(lab, TestLab)
    first, second = lab.rows
    assert first.test_case.reference_contexts == [RATE, LIMIT]
    assert first.test_case.expected_retrieved_doc_uris == [context_id(RATE), context_id(LIMIT)]
    assert [chunk.doc_uri for chunk in first.context] == [context_id(RATE), context_id(HOURS)]
    assert context_id(f"  {RATE}\n") == context_id(RATE) != context_id(LIMIT)
    assert [chunk.doc_uri for chunk in second.context] == ["kb://branches#0"]
    assert second.test_case.expected_retrieved_doc_uris == ["kb://branches#0"]
    assert second.test_case.reference_contexts == []


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_import_export_import_is_lossless(samples_file: Path, tmp_path: Path, suffix: str) -> None:
    original = import_ragas(samples_file)
    path = tmp_path / f"contexts{suffix}"
    export_ragas(original, path)
    assert import_ragas(path) == original


def test_export_writes_reference_contexts_and_only_ids_that_are_not_text_hashes(
    samples_file: Path, tmp_path: Path
) -> None:
    path = tmp_path / "out.jsonl"
    export_ragas(import_ragas(samples_file), path)
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    assert first["reference_contexts"] == [RATE, LIMIT]
    assert "reference_context_ids" not in first and "retrieved_context_ids" not in first
    assert second["retrieved_context_ids"] == second["reference_context_ids"] == ["kb://branches#0"]


def test_a_suite_keeps_its_reference_contexts_through_csv(tmp_path: Path) -> None:
    source = tmp_path / "suite.jsonl"
    source.write_text(json.dumps({"user_input": "q", "reference": "a", "reference_contexts": [LIMIT]}) + "\n")
    suite = import_ragas(source)
    assert isinstance(suite, TestSuite)
    export_ragas(suite, tmp_path / "suite.csv")
    assert (tmp_path / "suite.csv").read_text().splitlines()[0] == "user_input,reference,reference_contexts"
    assert import_ragas(tmp_path / "suite.csv") == suite


def test_ids_that_do_not_match_the_contexts_name_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    record = {"user_input": "q", "retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["x"]}
    path.write_text(json.dumps({"user_input": "ok"}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(FormatError) as caught:
        import_ragas(path)
    assert caught.value.location == "line 2, retrieved_context_ids"
    assert caught.value.message == "1 ids for 2 retrieved_contexts; give one id per context"


def test_document_recall_scores_ragas_cases_by_their_reference_contexts(samples_file: Path) -> None:
    lab = import_ragas(samples_file)
    selected, skipped = select_evaluators(lab, ["all"])
    assert "document_recall" in selected, skipped.get("document_recall")
    result = run_evaluator(build_evaluator("document_recall"), lab)
    assert [row.unscored_reason for row in result.rows] == [None, None]
    assert [row.scores["document_recall"] for row in result.rows] == [0.5, 1.0]
    assert result.rows[0].details["missing_doc_uris"] == [context_id(LIMIT)]
