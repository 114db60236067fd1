import json
from pathlib import Path

import pytest

from assay.formats.errors import FormatError, stable_key
from assay.formats.ragas import context_id, export_ragas, import_ragas, parse_list_cell
from assay.models import RetrievedChunk, TestLab, TestSuite


def test_csv_with_responses_imports_as_a_lab(data_dir: Path) -> None:
    lab = import_ragas(data_dir / "ragas_lab.csv", model_key="rag")
    assert isinstance(lab, TestLab)
    assert lab.name == "ragas_lab"
    assert [model.key for model in lab.models] == ["rag"]
    france, hamlet, sums = lab.rows
    assert france.test_case.key == stable_key("ragas", 0, "What is the capital of France?")
    assert france.test_case.prompt == "What is the capital of France?"
    assert france.test_case.expected_output == "Paris is the capital of France."
    assert france.actual_output == "Paris."
    paris = "Paris is the capital and largest city of France."
    assert france.context == [RetrievedChunk(text=paris, doc_uri=context_id(paris), rank=0)]
    assert [(chunk.text, chunk.rank) for chunk in hamlet.context] == [  # a Python list literal, as pandas writes
        ("Hamlet is a tragedy by William Shakespeare.", 0),
        ("It was written around 1600.", 1),
    ]
    assert hamlet.actual_output == "William Shakespeare\nwrote it around 1600."
    assert (sums.actual_output, sums.context, sums.test_case.expected_output) == (None, [], "4")


def test_jsonl_without_responses_imports_as_a_suite(data_dir: Path) -> None:
    suite = import_ragas(data_dir / "ragas_suite.jsonl")
    assert isinstance(suite, TestSuite)
    cases = [case for _, case in suite.cases()]
    assert [(case.prompt, case.expected_output) for case in cases] == [
        ("When was the Eiffel Tower completed?", "It was completed in 1889."),
        ("How tall is the Eiffel Tower?", "About 330 metres."),
    ]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
@pytest.mark.parametrize("fixture", ["ragas_lab.csv", "ragas_suite.jsonl"])
def test_round_trip(data_dir: Path, tmp_path: Path, fixture: str, suffix: str) -> None:
    original = import_ragas(data_dir / fixture)
    path = tmp_path / (Path(fixture).stem + suffix)
    export_ragas(original, path)
    assert import_ragas(path) == original


def test_csv_export_json_encodes_list_cells(data_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    export_ragas(import_ragas(data_dir / "ragas_lab.csv"), path)
    lines = path.read_text().splitlines()
    assert lines[0] == "user_input,retrieved_contexts,response,reference"
    assert lines[1] == (
        'What is the capital of France?,"[""Paris is the capital and largest city of France.""]",Paris.,'
        "Paris is the capital of France."
    )


def test_suite_export_has_no_output_columns(data_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    export_ragas(import_ragas(data_dir / "ragas_suite.jsonl"), path)
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {
        "user_input": "When was the Eiffel Tower completed?",
        "reference": "It was completed in 1889.",
        "reference_contexts": ["The Eiffel Tower was completed in March 1889."],
    }


def test_broken_list_cell_names_row_and_column(data_dir: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_ragas(data_dir / "ragas_broken_contexts.csv")
    assert str(caught.value) == (
        f"{data_dir / 'ragas_broken_contexts.csv'}: line 3, column retrieved_contexts: "
        'expected a JSON list of strings or a Python list literal (got "[Shakespeare wrote it")'
    )


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        (
            "query,reference\nq,a\n",
            "line 1",
            "missing column 'user_input' or 'question' (found columns ['query', 'reference'])",
        ),
        (
            "user_input,reference\nq,a\n,b\n",
            "line 3, column user_input",
            "field required (expected a string)",
        ),
        (
            "user_input,reference\nq,a,extra\n",
            "line 2",
            '3 cells but the header has 2 columns (["user_input", "reference"]): a comma too many, or a cell holding '
            'a comma that is not quoted ("a, b")',
        ),
        (
            'user_input,retrieved_contexts\nq,"[1, 2]"\n',
            "line 2, column retrieved_contexts",
            'expected a JSON list of strings or a Python list literal (got "[1, 2]")',
        ),
    ],
)
def test_malformed_csv_names_line_and_column(tmp_path: Path, text: str, location: str, message: str) -> None:
    path = tmp_path / "set.csv"
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        import_ragas(path)
    assert (caught.value.location, caught.value.message) == (location, message)


def test_malformed_jsonl_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"user_input": "q"}\n{"user_input": "q", "retrieved_contexts": "nope"}\n')
    with pytest.raises(FormatError) as caught:
        import_ragas(path)
    assert caught.value.location == "line 2, retrieved_contexts"


def test_parse_list_cell_accepts_json_and_python_literals() -> None:
    assert parse_list_cell('["a", "b"]') == ["a", "b"]
    assert parse_list_cell("['a', \"b's\"]") == ["a", "b's"]
    assert parse_list_cell("[]") == []
    for bad in ("a, b", "{'a': 1}", "[1]", "__import__('os')"):
        with pytest.raises(ValueError):
            parse_list_cell(bad)
