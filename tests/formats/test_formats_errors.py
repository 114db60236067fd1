import pickle
from pathlib import Path

import pytest

from assay.formats.errors import (
    FormatError,
    at_cell,
    at_line,
    json_path,
    load_json,
    load_records,
    read_text,
    stable_key,
    validate,
)
from assay.models import TestSuite


def _suite_data(*cases: dict) -> dict:
    return {"name": "s", "tests": [{"key": "t", "test_cases": list(cases)}]}


def test_format_error_reads_file_location_message() -> None:
    error = FormatError(
        Path("suite.json"), "tests[0].test_cases[2].prompt", "field required (expected a string)"
    )
    assert str(error) == "suite.json: tests[0].test_cases[2].prompt: field required (expected a string)"
    assert isinstance(error, ValueError)
    assert str(FormatError("suite.json", "", "file is empty")) == "suite.json: file is empty"


def test_format_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(FormatError("a.csv", "line 3", "bad")))
    assert (error.path, error.location, error.message) == (Path("a.csv"), "line 3", "bad")


def test_locations_render_json_paths_lines_and_cells() -> None:
    assert json_path("tests", 0, "test_cases", 2, "prompt") == "tests[0].test_cases[2].prompt"
    assert json_path("records[3]", "request") == "records[3].request"
    assert json_path("", 3, "request") == "[3].request"
    assert at_line(4, ("request", "messages", 0)) == "line 4, request.messages[0]"
    assert at_line(4) == "line 4"
    assert at_cell(3, ("retrieved_contexts",)) == "line 3, column retrieved_contexts"


def test_missing_field_names_the_json_path_and_expected_type() -> None:
    data = _suite_data({"key": "a", "prompt": "p"}, {"key": "b", "prompt": "q"}, {"key": "c"})
    with pytest.raises(FormatError) as caught:
        validate(TestSuite, data, Path("suite.json"))
    assert (
        str(caught.value) == "suite.json: tests[0].test_cases[2].prompt: field required (expected a string)"
    )


def test_wrong_type_shows_expected_and_received_value() -> None:
    data = _suite_data({"key": "a", "prompt": "p", "categories": "privacy"})
    with pytest.raises(FormatError) as caught:
        validate(TestSuite, data, Path("suite.json"))
    assert caught.value.location == "tests[0].test_cases[0].categories"
    assert caught.value.message == 'expected a list of strings (got "privacy")'


def test_several_errors_are_listed_and_capped() -> None:
    data = _suite_data(*({"key": f"k{i}"} for i in range(7)))
    with pytest.raises(FormatError) as caught:
        validate(TestSuite, data, Path("suite.json"))
    message = caught.value.message
    assert message.startswith(
        "field required (expected a string); also tests[0].test_cases[1].prompt: field required"
    )
    assert "tests[0].test_cases[4].prompt" in message
    assert "tests[0].test_cases[5].prompt" not in message
    assert message.endswith("; and 2 more")


def test_validator_errors_keep_their_own_message() -> None:
    data = _suite_data({"key": "same", "prompt": "p"}, {"key": "same", "prompt": "q"})
    with pytest.raises(FormatError) as caught:
        validate(TestSuite, data, Path("suite.json"))
    assert str(caught.value) == "suite.json: test case key 'same' is used more than once"


def test_missing_empty_directory_and_non_utf8_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as missing:
        read_text(tmp_path / "nope.json")
    assert str(missing.value) == f"{tmp_path / 'nope.json'}: file not found"
    (tmp_path / "empty.json").write_text("  \n")
    with pytest.raises(FormatError) as empty:
        read_text(tmp_path / "empty.json")
    assert str(empty.value) == f"{tmp_path / 'empty.json'}: file is empty"
    with pytest.raises(FormatError) as directory:
        read_text(tmp_path)
    assert str(directory.value) == f"{tmp_path}: is a directory, expected a file"
    (tmp_path / "latin1.csv").write_bytes("user_input\nqu'est-ce que le caf\xe9?\n".encode("latin-1"))
    with pytest.raises(FormatError) as caught:
        read_text(tmp_path / "latin1.csv")
    assert caught.value.location == "line 2 column 21"
    assert caught.value.message == "not valid UTF-8 (byte 0xe9); save the file as UTF-8"


def test_utf8_bom_is_tolerated(tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert load_json(tmp_path / "bom.json") == {"a": 1}


def test_invalid_json_reports_line_and_column(data_dir: Path) -> None:
    with pytest.raises(FormatError) as caught:
        load_json(data_dir / "suite_bad_json.json")
    assert caught.value.location == "line 6 column 36"
    assert caught.value.message == "invalid JSON: Expecting ',' delimiter"


def test_jsonl_errors_report_the_file_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"request": "a"}\n\n{"request": "b",}\n')
    with pytest.raises(FormatError) as caught:
        load_records(path)
    assert caught.value.location == "line 3 column 17"
    path.write_text('{"request": "a"}\n["not", "an", "object"]\n')
    with pytest.raises(
        FormatError, match=r'set.jsonl: line 2: expected an object \(got \["not", "an", "object"\]\)'
    ):
        load_records(path)


def test_json_records_must_be_a_list(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('{"records": {"request": "a"}}')
    with pytest.raises(FormatError) as caught:
        load_records(path)
    assert caught.value.location == "records"
    assert caught.value.message.startswith('expected a list of records or {"records": [...]}')


def test_stable_keys_are_deterministic_and_distinct() -> None:
    assert stable_key("Suite", 0, 1) == stable_key("Suite", 0, 1)
    assert stable_key("Suite", 0, 1) != stable_key("Suite", 1, 0)
    assert stable_key("Suite", 0) != stable_key("Suite", 0, 0)
