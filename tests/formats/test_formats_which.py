"""Which format a file is (issue 36, items 4 and 6): a CSV's columns decide it, and a file named as the wrong
format says which one it looks like, in its one-line error."""

import json
from pathlib import Path

import pytest

from assay.formats import FormatError, detect_format, export_file, read_file
from assay.models import TestSuite

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("header", "format"),
    [
        ("user_input,response,retrieved_contexts,reference", "ragas"),
        ("question,answer,contexts,ground_truth", "ragas"),
        ("question,ground_truths", "ragas"),
        ("input,actual_output,expected_output,retrieval_context,context", "deepeval"),
        ("input,context,__expected", "promptfoo"),
        ("topic,__expected1,__metadata:category", "promptfoo"),
        (
            "inputs,outputs,expectations,tags,source_type,source_id,source,created_time,dataset_record_id",
            "mlflow-genai",
        ),
        ("request,response", "mlflow"),
    ],
)
def test_a_csv_files_columns_decide_its_format(tmp_path: Path, header: str, format: str) -> None:
    path = tmp_path / "set.csv"
    path.write_text(header + "\n" + ",".join("x" for _ in header.split(",")) + "\n")
    assert detect_format(path) == format


def test_a_csv_with_no_known_columns_is_not_taken_for_ragas(tmp_path: Path) -> None:
    path = tmp_path / "vars.csv"
    path.write_text("language,body\nFrench,Hello\n")
    with pytest.raises(FormatError) as caught:
        read_file(path)
    assert caught.value.message.startswith("cannot tell the format; looked for assay (")
    assert "found CSV columns ['language', 'body']" in caught.value.message


@pytest.mark.parametrize(
    ("path", "named", "looks_like"),
    [
        (DATA / "deepeval" / "deepeval_goldens.json", "mlflow", "deepeval"),
        (DATA / "deepeval" / "deepeval_answered.csv", "ragas", "deepeval"),
        (DATA / "promptfoo" / "simple-test_tests.csv", "deepeval", "promptfoo"),
        (DATA / "ragas_lab.csv", "mlflow", "ragas"),
        (DATA / "mlflow_suite.json", "ragas", "mlflow"),
    ],
)
def test_a_file_named_as_another_format_says_what_it_looks_like(path: Path, named: str, looks_like: str) -> None:
    with pytest.raises(FormatError) as caught:
        read_file(path, named)
    message = str(caught.value)
    assert message.endswith(f"; this looks like {looks_like}: read it as that format instead")
    assert message.startswith(f"{path}: ") and "\n" not in message


def test_no_hint_when_no_other_format_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps([{"input": "q", "expected_output": 3}]))  # deepeval-shaped but invalid
    with pytest.raises(FormatError) as caught:
        read_file(path, "mlflow")
    assert "looks like" not in str(caught.value)


def test_import_only_formats_say_so_when_asked_to_export(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        export_file(TestSuite(name="s"), tmp_path / "s.json", "deepeval")
    assert caught.value.message.startswith("unknown format 'deepeval' (it is read, not written); expected one of")
