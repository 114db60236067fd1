"""Ragas 0.1 columns (issue 36, item 4) beside the current ones. The sample is the one in Ragas 0.1.21's docs
(docs/concepts/metrics/context_recall.md, Apache-2.0), written as a Ragas 0.1 user saved it: a Hugging Face
``Dataset`` through pandas (``to_csv``, and ``to_json(orient="records", lines=True)``, which
``Dataset.to_json`` calls), since the ``datasets`` package is not part of Assay's environment."""

from pathlib import Path

import pytest

from assay.formats import FormatError, detect_format, read_file
from assay.models import TestLab

pd = pytest.importorskip("pandas")

FIRST = "The First AFL–NFL World Championship Game was an American football game played on January 15, 1967, at "
SAMPLES = {
    "question": ["When was the first super bowl?", "Who won the most super bowls?"],
    "answer": ["The first superbowl was held on Jan 15, 1967",
               "The most super bowls have been won by The New England Patriots"],
    "contexts": [[FIRST + "the Los Angeles Memorial Coliseum in Los Angeles,"],
                 ["The Green Bay Packers...Green Bay, Wisconsin.", "The Packers compete...Football Conference"]],
    "ground_truth": ["The first superbowl was held on January 15, 1967",
                     "The New England Patriots have won the Super Bowl a record six times"],
}  # fmt: skip


def _write(samples: dict, path: Path) -> Path:
    frame = pd.DataFrame(samples)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    return path


@pytest.mark.parametrize("name", ["ragas01.csv", "ragas01.jsonl"])
def test_ragas_01_columns_read_as_the_current_ones(tmp_path: Path, name: str) -> None:
    imported = read_file(_write(SAMPLES, tmp_path / name), model_key="rag")
    assert (imported.format, imported.detected) == ("ragas", True)
    lab = imported.content
    assert isinstance(lab, TestLab) and len(lab.rows) == 2
    assert [row.test_case.prompt for row in lab.rows] == SAMPLES["question"]
    assert [row.actual_output for row in lab.rows] == SAMPLES["answer"]
    assert [[chunk.text for chunk in row.context] for row in lab.rows] == SAMPLES["contexts"]
    assert [row.test_case.expected_output for row in lab.rows] == SAMPLES["ground_truth"]


def test_ground_truths_keep_the_first_as_ragas_01_does(tmp_path: Path) -> None:
    samples = {key: value for key, value in SAMPLES.items() if key != "ground_truth"}
    samples["ground_truths"] = [["January 15, 1967", "1967"], ["The New England Patriots"]]
    lab = read_file(_write(samples, tmp_path / "old.csv")).content
    assert [row.test_case.expected_output for row in lab.rows] == ["January 15, 1967", "The New England Patriots"]


def test_errors_name_the_ragas_01_column_as_written(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("question,contexts,answer\nq,[not a list,a\n")
    with pytest.raises(FormatError) as caught:
        read_file(path)
    assert caught.value.location == "line 2, column contexts"
    path.write_text("question,ground_truths\nq,3\n")
    with pytest.raises(FormatError) as caught:
        read_file(path)
    assert str(caught.value) == f'{path}: line 2, column ground_truths: expected a list of strings (got "3")'
    assert detect_format(path) == "ragas"
