"""MLflow 3 GenAI evaluation datasets (issue 36, item 4), written in the test by MLflow's own record writer
(``DatasetRecord.to_dict``, from mlflow-tracing) and by pandas from the frame ``EvaluationDataset.to_df()``
builds (its columns copied from MLflow 3.17's source: that class needs the full mlflow package)."""

import json
from pathlib import Path
from typing import Any

import pytest

from assay.formats import FormatError, detect_format, read_file
from assay.models import TestLab, TestSuite

pd = pytest.importorskip("pandas")
dataset_record = pytest.importorskip("mlflow.entities.dataset_record")
record_source = pytest.importorskip("mlflow.entities.dataset_record_source")

FRAME_COLUMNS = ("inputs", "outputs", "expectations", "tags", "source_type", "source_id", "source", "created_time",
                 "dataset_record_id")  # fmt: skip
"""What ``EvaluationDataset.to_df()`` puts in its frame, in order (mlflow/entities/evaluation_dataset.py)."""


def _records(with_outputs: bool) -> list[Any]:
    human = record_source.DatasetRecordSource(
        source_type=record_source.DatasetRecordSourceType.HUMAN, source_data={"source_id": "alice"}
    )
    given = [
        ("r-1", {"question": "What is MLflow?"},
         {"response": "MLflow is an open source MLOps platform.",
          "retrieved_context": [{"content": "MLflow is open source.", "doc_uri": "docs/intro.md"}]},
         {"expected_response": "An open source platform for the ML lifecycle.",
          "expected_facts": ["open source", "ML lifecycle"]}, {"topic": "basics"}),
        ("r-2", {"messages": [{"role": "system", "content": "Be brief."},
                              {"role": "user", "content": "How do I log a model?"}]},
         {"choices": [{"message": {"role": "assistant", "content": "Call mlflow.log_model."}}]},
         {"expected_facts": ["mlflow.<flavor>.log_model", "an artifact path"],
          "guidelines": {"tone": ["Be brief"], "safety": ["No secrets"]}}, {}),
        ("r-3", {"query": "Which tracking URI?", "user": "bob"}, None,
         {"expected_response": "The one set by MLFLOW_TRACKING_URI.", "rubric": "exact"}, {}),
    ]  # fmt: skip
    return [
        dataset_record.DatasetRecord(
            dataset_id="d-7", dataset_record_id=key, created_time=1_700_000_000_000, last_update_time=1_700_000_000_000,
            inputs=inputs, outputs=outputs if with_outputs else None, expectations=expectations, tags=tags,
            source=human if key == "r-1" else None,
        )
        for key, inputs, outputs, expectations, tags in given
    ]  # fmt: skip


def _frame(records: list[Any]) -> Any:
    rows = [{"inputs": r.inputs, "outputs": r.outputs, "expectations": r.expectations, "tags": r.tags,
             "source_type": r.source_type, "source_id": r.source_id, "source": r.source,
             "created_time": r.created_time, "dataset_record_id": r.dataset_record_id} for r in records]  # fmt: skip
    frame = pd.DataFrame(rows)
    assert tuple(frame.columns) == FRAME_COLUMNS
    return frame


def _write(kind: str, folder: Path, with_outputs: bool) -> Path:
    records = _records(with_outputs)
    if kind == "records.json":
        (folder / kind).write_text(json.dumps([record.to_dict() for record in records]))
    elif kind == "dataset.json":
        (folder / kind).write_text(
            json.dumps({"name": "qa", "dataset_id": "d-7", "records": [r.to_dict() for r in records]})
        )
    elif kind == "to_df.json":
        _frame(records).to_json(folder / kind, orient="records")
    elif kind == "to_df.jsonl":
        _frame(records).to_json(folder / kind, orient="records", lines=True)
    else:
        _frame(records).to_csv(folder / kind, index=False)
    return folder / kind


KINDS = ("records.json", "dataset.json", "to_df.json", "to_df.jsonl", "to_df.csv")


@pytest.mark.parametrize("kind", KINDS)
def test_a_dataset_with_outputs_imports_as_a_lab(tmp_path: Path, kind: str) -> None:
    imported = read_file(_write(kind, tmp_path, with_outputs=True), model_key="agent")
    assert (imported.format, imported.detected) == ("mlflow-genai", True)
    assert imported.notes == [
        "expectations.expected_facts not mapped where expected_response is given (the response is kept)",
        "expectations.rubric not mapped",
    ]
    lab = imported.content
    assert isinstance(lab, TestLab) and len(lab.rows) == 3
    first, second, third = lab.rows
    assert [row.test_case.key for row in lab.rows] == ["r-1", "r-2", "r-3"]
    assert first.test_case.prompt == "What is MLflow?"
    assert first.test_case.expected_output == "An open source platform for the ML lifecycle."
    assert first.test_case.categories == ["topic:basics"]
    assert first.actual_output == "MLflow is an open source MLOps platform."
    assert [(c.text, c.doc_uri) for c in first.context] == [("MLflow is open source.", "docs/intro.md")]
    assert second.test_case.prompt == "How do I log a model?"
    assert [(turn.role, turn.content) for turn in second.test_case.turns] == [("system", "Be brief.")]
    assert second.test_case.expected_output == "mlflow.<flavor>.log_model\nan artifact path"
    assert second.test_case.guidelines == ["Be brief", "No secrets"]
    assert second.actual_output == "Call mlflow.log_model."
    assert (third.test_case.prompt, third.test_case.variables) == ("Which tracking URI?", {"user": "bob"})
    assert (third.actual_output, third.context) == (None, [])


@pytest.mark.parametrize("kind", KINDS)
def test_a_dataset_without_outputs_imports_as_a_suite(tmp_path: Path, kind: str) -> None:
    suite = read_file(_write(kind, tmp_path, with_outputs=False)).content
    assert isinstance(suite, TestSuite)
    assert [case.prompt for _, case in suite.cases()] == [
        "What is MLflow?",
        "How do I log a model?",
        "Which tracking URI?",
    ]


def test_evaluate_data_with_text_outputs_and_a_chosen_input(tmp_path: Path) -> None:
    """``mlflow.genai.evaluate(data=[...])``'s plain records; MLflow wraps a text output in mlflow_wrapped."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps([
        {"inputs": {"city": "Paris", "request": "Weather?"}, "outputs": "Sunny."},
        {"inputs": {"city": "Oslo", "request": "Rain?"}, "outputs": {"mlflow_wrapped": "Yes."}},
    ]))  # fmt: skip
    with pytest.raises(FormatError) as caught:
        read_file(path)
    assert str(caught.value) == (
        f"{path}: [0].inputs: cannot tell which of inputs ['city', 'request'] is the question (looked for question, "
        "query, input, prompt); name it with --prompt-var"
    )
    lab = read_file(path, prompt_var="request").content
    assert isinstance(lab, TestLab)
    assert [(r.test_case.prompt, r.test_case.variables, r.actual_output) for r in lab.rows] == [
        ("Weather?", {"city": "Paris"}, "Sunny."),
        ("Rain?", {"city": "Oslo"}, "Yes."),
    ]


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        ('{"expectations": {}}', "line 1, inputs", "field required (expected an object with the question"),
        ('{"inputs": {"messages": [{"role": "assistant", "content": "hi"}]}}', "line 1, inputs.messages[0].role",
         "expected the last message to be the user's question (got role 'assistant')"),
        ('{"inputs": {"question": "q"}, "outputs": {"score": 3}}', "line 1, outputs",
         "expected an answer under one of"),
        ('{"inputs": {"question": "q"}, "expectations": {"expected_facts": "one"}}',
         "line 1, expectations.expected_facts", "expected a list of strings"),
    ],
)  # fmt: skip
def test_bad_records_name_line_and_field(tmp_path: Path, text: str, location: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(FormatError) as caught:
        read_file(path, "mlflow-genai")
    assert caught.value.location == location and caught.value.message.startswith(message)


def test_a_csv_cell_that_is_no_dict_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "frame.csv"
    path.write_text("inputs,expectations\n{'question': 'q'},{'expected_response': 'a'\n")
    with pytest.raises(FormatError) as caught:
        read_file(path)
    assert caught.value.location == "line 2, column expectations"
    assert detect_format(path) == "mlflow-genai"
