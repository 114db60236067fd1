"""Inputs the third security audit found accepted (issue 35, items 11 and 12): each is now refused with a line
naming the file and the field, column or position, never read into something else."""

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.formats import FormatError, import_file
from assay.validity.labels import load_labelled_set

runner = CliRunner()
DATA = Path(__file__).parent / "data"


def _lab(**row_fields: object) -> dict:
    row = {"test_case": {"key": "k1", "prompt": "Fee?"}, "model_key": "m1", "actual_output": "5 EUR."} | row_fields
    return {"schema_version": 1, "name": "lab", "models": [{"key": "m1", "type": "t"}], "rows": [row]}


def _refused(path: Path) -> str:
    with pytest.raises(FormatError) as error:
        import_file(path)
    return str(error.value)


def test_a_csv_column_named_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("question,context,answer,label,label\nFee?,The fee is 5 EUR.,5 EUR.,1,0\n")
    with pytest.raises(FormatError, match=r"labels\.csv: line 1: the column 'label' appears twice \(columns 4 and 5\)"):
        load_labelled_set(path)


@pytest.mark.parametrize("field", ["id", "group"])
def test_nan_as_a_labels_id_or_group_is_refused(tmp_path: Path, field: str) -> None:
    path = tmp_path / "labels.json"
    record = {"question": "Fee?", "context": "The fee is 5 EUR.", "answer": "5 EUR.", "label": 1}
    path.write_text(json.dumps([record | {field: float("nan")}]))  # Python writes NaN, which is not JSON
    with pytest.raises(FormatError, match="NaN is not a JSON value"):
        load_labelled_set(path)


def test_nan_in_an_unknown_jsonl_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"question": "Fee?", "context": "c", "answer": "a", "label": 1, "score": NaN}\n')
    with pytest.raises(FormatError, match=r"line 1.*NaN is not a JSON value"):
        load_labelled_set(path)


def test_a_model_key_used_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    data = _lab()
    data["models"].append({"key": "m1", "type": "other"})
    path.write_text(json.dumps(data))
    assert "models[1].key 'm1' is used twice" in _refused(path)


@pytest.mark.parametrize("field", ["actual_duration", "cost", "input_tokens"])
def test_true_is_no_duration_cost_or_count(tmp_path: Path, field: str) -> None:
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(_lab(**{field: True})))
    assert f"rows[0].{field}" in _refused(path) and "expected a number, got true" in _refused(path)


def test_an_eval_studio_lab_with_a_null_dataset_is_refused(tmp_path: Path) -> None:
    data = json.loads((DATA / "eval_studio_testlab.json").read_text())
    data["dataset"] = None
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match=r"lab\.json: dataset: is null"):
        import_file(path, "eval-studio-testlab")


@pytest.mark.parametrize("option", ["--lab", "--approvals"])
@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_fifo_or_a_device_is_named_as_what_it_is(tmp_path: Path, option: str, kind: str) -> None:
    path = tmp_path / "input.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    out = str(tmp_path / "out")
    commands = {
        "--lab": ["evaluate", "--lab", str(path), "--evaluators", "bleu", "--out", out],
        "--approvals": ["mrm", "run", "--non-interactive", "--approvals", str(path), "--out", out],
    }
    args = commands[option]
    result = runner.invoke(app, args)
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    expected = "(a FIFO)" if kind == "fifo" else "(a character device)"
    assert f"{option} {path}: is not a regular file {expected}" in said and "no such file" not in said


@pytest.mark.parametrize(
    ("answer_path", "reason"),
    [(".".join(["$"] + ["a"] * 5_000), "JSONPath expression of 10001 characters")],
)
def test_a_jsonpath_too_long_or_deep_is_refused_when_the_host_file_is_read(
    tmp_path: Path, answer_path: str, reason: str
) -> None:
    """It used to pass the host-file check and then fail every call with a RecursionError."""
    from assay.hosts.files import read_host_file

    path = tmp_path / "host.json"
    mapping = {"answer": answer_path}
    host = {"key": "rag", "type": "http-rag", "url": "http://127.0.0.1:9/rag", "settings": {"mapping": mapping}}
    path.write_text(json.dumps(host))
    with pytest.raises(ValueError, match=reason):
        read_host_file(path)
