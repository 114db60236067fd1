"""Format detection (issue 7, item 10): a file's format comes from its content, a named format overrides."""

import json
from pathlib import Path

import pytest

from assay import formats
from assay.corpora import sample_data_path
from assay.formats import FormatError, export_file, import_file
from assay.models import TestLab, TestSuite


@pytest.mark.parametrize(
    ("name", "format"),
    [
        ("eval_studio_suite.json", "eval-studio-suite"),
        ("suite_missing_prompt.json", "eval-studio-suite"),
        ("eval_studio_testlab.json", "eval-studio-testlab"),
        ("testlab_unknown_model.json", "eval-studio-testlab"),
        ("mlflow_lab.jsonl", "mlflow"),
        ("mlflow_suite.json", "mlflow"),
        ("ragas_lab.csv", "ragas"),
        ("ragas_broken_contexts.csv", "ragas"),
        ("ragas_suite.jsonl", "ragas"),
    ],
)
def test_every_sample_file_is_detected_as_its_format(data_dir: Path, name: str, format: str) -> None:
    assert formats.detect_format(data_dir / name) == format


def test_the_bundled_assay_suite_is_detected() -> None:
    assert formats.detect_format(sample_data_path() / "suite.json") == "assay"


@pytest.mark.parametrize(
    ("format", "name"),
    [
        ("assay", "suite.json"),
        ("assay", "lab.json"),
        ("eval-studio-suite", "suite.json"),
        ("eval-studio-testlab", "lab.json"),
        ("mlflow", "lab.json"),
        ("mlflow", "lab.jsonl"),
        ("ragas", "lab.json"),
        ("ragas", "lab.jsonl"),
        ("ragas", "lab.csv"),
    ],
)
def test_exports_are_detected_as_the_format_they_were_written_in(
    rich_suite: TestSuite, rich_lab: TestLab, tmp_path: Path, format: str, name: str
) -> None:
    export_file(rich_suite if name.startswith("suite") else rich_lab, tmp_path / name, format, model_key="rag")
    assert formats.detect_format(tmp_path / name) == format
    assert import_file(tmp_path / name, model_key="rag") == import_file(tmp_path / name, format, model_key="rag")


def test_an_eval_studio_lab_imports_without_naming_its_format(data_dir: Path) -> None:
    lab = import_file(data_dir / "eval_studio_testlab.json")
    assert isinstance(lab, TestLab)
    assert lab == import_file(data_dir / "eval_studio_testlab.json", "eval-studio-testlab")


def test_a_named_format_overrides_detection(data_dir: Path) -> None:
    with pytest.raises(FormatError, match="extra inputs are not permitted"):
        import_file(data_dir / "eval_studio_testlab.json", "assay")


@pytest.mark.parametrize(
    ("name", "content", "found"),
    [
        ("x.json", {"foo": 1}, "found an object with keys ['foo']"),
        ("x.json", [{"question": "q"}], "found records with keys ['question']"),
        ("x.json", [], "found an empty list of records"),
        ("x.json", [1, 2], "found a record that is not an object (1)"),
        ("x.json", "text", "found a JSON value that is neither an object nor a list of records"),
        ("x.jsonl", {"prompt": "p"}, "found records with keys ['prompt']"),
    ],
)
def test_undetectable_files_list_what_was_looked_for(tmp_path: Path, name: str, content: object, found: str) -> None:
    (tmp_path / name).write_text(json.dumps(content) + "\n")
    with pytest.raises(FormatError) as caught:
        import_file(tmp_path / name)
    message = caught.value.message
    assert message.startswith("cannot tell the format; looked for assay (")
    assert all(format in message for format in formats.FORMATS)
    assert found in message
