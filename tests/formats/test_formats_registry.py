from pathlib import Path

import pytest

from assay.formats import FORMATS, FormatError, export_file, import_file
from assay.models import TestLab, TestSuite


def test_formats_are_registered() -> None:
    assert sorted(FORMATS) == [
        "assay", "deepeval", "eval-studio-suite", "eval-studio-testlab", "mlflow", "mlflow-genai", "promptfoo", "ragas"
    ]  # fmt: skip


def test_unknown_format_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_file(tmp_path / "x.json", "langsmith")
    known = "assay, deepeval, eval-studio-suite, eval-studio-testlab, mlflow, mlflow-genai, promptfoo, ragas"
    assert caught.value.message == f"unknown format 'langsmith'; expected one of {known}"


@pytest.mark.parametrize("format", sorted(FORMATS))
def test_missing_and_empty_files_are_named(tmp_path: Path, format: str) -> None:
    name = "set.jsonl" if format in ("mlflow", "ragas") else "set.json"
    with pytest.raises(FormatError) as missing:
        import_file(tmp_path / name, format)
    assert str(missing.value) == f"{tmp_path / name}: file not found"
    (tmp_path / name).write_text("\n")
    with pytest.raises(FormatError) as empty:
        import_file(str(tmp_path / name), format)
    assert str(empty.value) == f"{tmp_path / name}: file is empty"


@pytest.mark.parametrize(
    ("format", "name"),
    [
        ("eval-studio-suite", "suite.json"),
        ("mlflow", "suite.json"),
        ("mlflow", "suite.jsonl"),
        ("ragas", "suite.csv"),
        ("ragas", "suite.jsonl"),
        ("assay", "suite.json"),
    ],
)
def test_suite_round_trips_through_every_format(tmp_path: Path, format: str, name: str) -> None:
    # Start from the file's own import so fields a flat format cannot carry are already normalised away.
    export_file(TestSuite.model_validate(_flat_suite()), tmp_path / name, format)
    first = import_file(tmp_path / name, format)
    export_file(first, tmp_path / name, format)
    assert import_file(tmp_path / name, format) == first
    assert [case.prompt for _, case in first.cases()] == ["What is 2 + 2?", "Name a prime."]


@pytest.mark.parametrize(
    ("format", "name"),
    [
        ("eval-studio-testlab", "lab.json"),
        ("mlflow", "lab.json"),
        ("mlflow", "lab.jsonl"),
        ("ragas", "lab.csv"),
        ("ragas", "lab.jsonl"),
        ("assay", "lab.json"),
    ],
)
def test_lab_round_trips_through_every_format(
    rich_lab: TestLab, tmp_path: Path, format: str, name: str
) -> None:
    export_file(rich_lab, tmp_path / name, format, model_key="rag")
    first = import_file(tmp_path / name, format, model_key="rag")
    assert isinstance(first, TestLab)
    assert [row.actual_output for row in first.rows_for("rag")] == [
        "RAG answer to capital",
        "RAG answer to capital-typo",
        "RAG answer to river",
    ]
    export_file(first, tmp_path / name, format, model_key="rag")
    assert import_file(tmp_path / name, format, model_key="rag") == first


def test_eval_studio_formats_hold_one_kind(rich_lab: TestLab, tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        export_file(rich_lab, tmp_path / "suite.json", "eval-studio-suite")
    assert caught.value.message == "eval-studio-suite holds a TestSuite, got a TestLab"


def _flat_suite() -> dict:
    cases = [
        {"key": "sum", "prompt": "What is 2 + 2?", "expected_output": "4"},
        {"key": "prime", "prompt": "Name a prime.", "expected_output": "7"},
    ]
    return {"name": "suite", "tests": [{"key": "t", "test_cases": cases}]}
