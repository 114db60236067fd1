"""Hostile input files (issue 7, items 6-8): every importer answers with a `FormatError`, never a traceback,
a hang, or rows silently lost or counted twice."""

import json
import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.corpora import load_corpus
from assay.formats import FormatError, import_file
from assay.formats import errors as format_errors
from assay.models import ModelHost, TestCase, TestLab, TestLabRow
from assay.testing.formats import ALL_FORMAT_SUFFIXES
from assay.testing.formats import JSON_FORMAT_SUFFIXES as FORMAT_SUFFIXES


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _lab_data() -> dict:
    """A valid Assay lab: two models answering the same two test cases."""
    rows = [
        {"test_case": {"key": key, "prompt": f"{key}?"}, "model_key": model, "actual_output": "a"}
        for model in ("m1", "m2")
        for key in ("k1", "k2")
    ]
    models = [{"key": "m1", "type": "t"}, {"key": "m2", "type": "t"}]
    return {"schema_version": 1, "name": "lab", "models": models, "rows": rows}


# Item 6: nesting deep enough to overflow the stack, CSV cells over the csv module's default limit.


@pytest.mark.parametrize("levels", [1_000, 100_000])
@pytest.mark.parametrize(("format", "suffix"), FORMAT_SUFFIXES)
def test_deeply_nested_json_is_a_format_error(tmp_path: Path, format: str, suffix: str, levels: int) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(_nested(levels))
    with pytest.raises(FormatError) as caught:
        import_file(path, format)
    assert (caught.value.location, caught.value.message) == ("line 1 column 101", "nested deeper than 100 levels")


@pytest.mark.parametrize(("format", "suffix"), FORMAT_SUFFIXES)
def test_deep_nesting_inside_a_record_names_its_line(tmp_path: Path, format: str, suffix: str) -> None:
    record = '{"user_input": "q", "request": "q", "prompt": "p", "extra": ' + _nested(5_000) + "}"
    path = tmp_path / f"deep{suffix}"
    path.write_text('{"user_input": "q", "request": "q"}\n\n' + record if suffix == ".jsonl" else f"[\n\n{record}]")
    with pytest.raises(FormatError, match=r"line 3 column \d+: nested deeper than 100 levels$"):
        import_file(path, format)


def test_nesting_is_bounded_even_where_json_would_parse_it(tmp_path: Path) -> None:
    limit = format_errors.MAX_JSON_DEPTH
    assert format_errors.parse_json(_nested(limit), tmp_path / "a.json") is not None
    with pytest.raises(FormatError) as caught:
        format_errors.parse_json('{"a":\n  ' + _nested(limit) + "}", tmp_path / "a.json")
    assert caught.value.location == f"line 2 column {3 + limit - 1}"


def test_deeply_nested_list_cell_in_csv_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "lab.csv"
    path.write_text(f'user_input,retrieved_contexts\nq,"{_nested(1_000)}"\n')
    with pytest.raises(FormatError) as caught:
        import_file(path, "ragas")
    assert caught.value.location == "line 2, column retrieved_contexts"
    assert caught.value.message.startswith("expected a JSON list of strings or a Python list literal")


def test_csv_cells_larger_than_the_csv_default_limit_import(tmp_path: Path) -> None:
    answer = "long answer " * 20_000  # 240,000 characters, past csv's default 131,072
    path = tmp_path / "lab.csv"
    path.write_text(f'user_input,response\nq1,"{answer}"\nq2,short\n')
    lab = import_file(path, "ragas")
    assert isinstance(lab, TestLab)
    assert [row.actual_output for row in lab.rows] == [answer, "short"]


@pytest.mark.parametrize(("format", "suffix"), FORMAT_SUFFIXES)
def test_overlong_integers_are_a_format_error(tmp_path: Path, format: str, suffix: str) -> None:
    path = tmp_path / f"big{suffix}"
    path.write_text('[{"user_input": "q", "request": "q", "n": ' + "9" * 5_000 + "}]")
    with pytest.raises(FormatError, match="invalid JSON: a number has more than 4300 digits"):
        import_file(path, format)


# Item 7: FIFOs and other non-regular files, and files too large to read.


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("format", "suffix"), ALL_FORMAT_SUFFIXES)
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, format: str, suffix: str) -> None:
    path = tmp_path / f"pipe{suffix}"
    os.mkfifo(path)
    with pytest.raises(FormatError) as caught:
        import_file(path, format)
    assert str(caught.value) == f"{path}: is not a regular file (a FIFO)"


def test_devices_and_sockets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as device:
        import_file("/dev/null", "assay")
    assert str(device.value) == "/dev/null: is not a regular file (a character device)"
    with tempfile.TemporaryDirectory() as short, socket.socket(socket.AF_UNIX) as server:
        path = Path(short) / "s.json"  # socket paths are limited to about 100 characters
        server.bind(str(path))
        with pytest.raises(FormatError) as caught:
            import_file(path, "assay")
        assert caught.value.message == "is not a regular file (a socket)"


def test_files_over_the_size_limit_are_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(format_errors, "MAX_INPUT_BYTES", 64)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_lab_data()))
    with pytest.raises(FormatError) as caught:
        import_file(path, "assay")
    assert caught.value.message == f"is {path.stat().st_size} bytes, larger than the 64 bytes an input file may be"


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "fees.md").write_text("# Fees\n\nA card costs £10.")
    yield folder


@pytest.mark.timeout(10)
@pytest.mark.parametrize("name", ["notes.md", "notes.txt", "notes.pdf"])
def test_a_fifo_in_a_corpus_is_reported_not_skipped_or_waited_on(corpus: Path, name: str) -> None:
    os.mkfifo(corpus / name)
    with pytest.raises(ValueError, match=rf"{name}: is not a regular file \(a FIFO\)$"):
        load_corpus(corpus)


def test_an_oversized_corpus_document_is_reported(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_errors, "MAX_INPUT_BYTES", 16)
    with pytest.raises(ValueError, match=r"fees\.md: is \d+ bytes, larger than the 16 bytes"):
        load_corpus(corpus)


def test_corpus_documents_still_read_with_text_mode_line_ends(corpus: Path) -> None:
    (corpus / "windows.txt").write_bytes(b"First paragraph.\r\n\r\nSecond paragraph.\r\n")
    documents = {document.uri: document.text for document in load_corpus(corpus).documents}
    assert documents["windows.txt"] == "First paragraph.\n\nSecond paragraph.\n"


# Item 8: a stray quote merging CSV rows, duplicate lab rows, infinite numbers.


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        ('user_input,response\nq1,"answer one\nq2,answer two\n', "line 2", "is never closed"),
        ('user_input,response\nq1,"answer one\nq2,answer two', "line 2", "is never closed"),
        ('user_input,response\r\nq1,"answer one\r\nq2,answer two\r\n', "line 2", "is never closed"),
        ('user_input,response\nq1,"two\nlines"\nq2,ok\nq3,"open\nq4,x\n', "line 5", "is never closed"),
        ('user_input,a,response\nq1,"two\nlines","open\nq2,x,y\n', "line 3", "is never closed"),
        ('user_input,response\nq1,"answer one\nq2,answer two\nq3,answer three"\n', "line 2, column response", "line 3"),
        ('user_input,response\nq1,"answer one\nq2,"answer two"\n', "line 3", 'must be doubled ("")'),
    ],
)
def test_an_unbalanced_quote_in_ragas_csv_is_an_error_not_a_lost_row(
    tmp_path: Path, text: str, location: str, message: str
) -> None:
    path = tmp_path / "lab.csv"
    path.write_bytes(text.encode())
    with pytest.raises(FormatError) as caught:
        import_file(path, "ragas")
    assert caught.value.location == location
    assert message in caught.value.message


def test_quoted_cells_spanning_lines_still_import(tmp_path: Path) -> None:
    path = tmp_path / "lab.csv"
    path.write_text('user_input,response,reference\nq1,"Steps:\n1. open, then save\n2. done",r1\nq2,"a ""b""",r2\n')
    lab = import_file(path, "ragas")
    assert isinstance(lab, TestLab)
    assert [row.actual_output for row in lab.rows] == ["Steps:\n1. open, then save\n2. done", 'a "b"']


def test_duplicate_lab_rows_name_both_rows(tmp_path: Path) -> None:
    data = _lab_data()
    data["rows"].append(data["rows"][1])
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError) as caught:
        import_file(path, "assay")
    assert caught.value.message == "rows[4]: duplicate of rows[1] (model m1, test case k2)"
    row = TestLabRow(test_case=TestCase(key="k", prompt="p"), model_key="m")
    with pytest.raises(ValidationError, match=r"rows\[1\]: duplicate of rows\[0\] \(model m, test case k\)"):
        TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=[row, row])


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400", '"Infinity"'])
@pytest.mark.parametrize(
    ("field", "location"),
    [
        (("actual_duration",), "rows[1].actual_duration"),
        (("cost",), "rows[1].cost"),
        (("test_case", "weight"), "rows[1].test_case.weight"),
    ],
)
def test_infinite_numbers_are_refused_in_assay_labs(
    tmp_path: Path, number: str, field: tuple[str, ...], location: str
) -> None:
    data = _lab_data()
    target = data["rows"][1]
    for part in field[:-1]:
        target = target[part]
    target[field[-1]] = "__NUMBER__"
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data).replace('"__NUMBER__"', number))
    with pytest.raises(FormatError) as caught:
        import_file(path, "assay")
    if number.startswith('"'):  # a string: valid JSON, refused by the field's type
        assert caught.value.location == location
        assert caught.value.message.startswith("expected a finite number (got ")
    else:  # not JSON at all: refused by the reader, at its line and column, naming the field
        assert caught.value.location.startswith("line 1 column ")
        assert caught.value.message.startswith(f"{location}: {number} is not a")


def test_infinite_chunk_scores_are_refused(tmp_path: Path) -> None:
    data = _lab_data()
    data["rows"][0]["context"] = [{"text": "chunk", "score": "__NUMBER__"}]
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data).replace('"__NUMBER__"', "1e400"))
    with pytest.raises(FormatError, match=r"rows\[0\]\.context\[0\]\.score: 1e400 is not a finite number"):
        import_file(path, "assay")


@pytest.mark.parametrize("field", ["actual_duration", "cost", "weight"])
def test_infinite_numbers_are_refused_in_eval_studio_labs(tmp_path: Path, data_dir: Path, field: str) -> None:
    data = json.loads((data_dir / "eval_studio_testlab.json").read_text())
    data["dataset"]["inputs"][0][field] = "__NUMBER__"
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data).replace('"__NUMBER__"', "Infinity"))
    with pytest.raises(FormatError) as caught:
        import_file(path, "eval-studio-testlab")
    assert caught.value.location.startswith("line ")
    assert caught.value.message.startswith(f"dataset.inputs[0].{field}: Infinity is not a JSON value")


# Issue 25, items 3, 4 and 10: a repeated key, a lone surrogate, a CSV row with the wrong number of cells.


def _repeat_key(document: dict, key: str, first_value: object) -> str:
    """``document`` as JSON text (one key a line) with ``key`` written twice: ``first_value``, then its own."""
    lines = [f"  {json.dumps(name)}: {json.dumps(value)}" for name, value in document.items()]
    lines.insert(1, f"  {json.dumps(key)}: {json.dumps(first_value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def test_a_repeated_tests_key_in_a_suite_is_refused_not_read_as_no_tests(tmp_path: Path) -> None:
    suite = {"schema_version": 1, "name": "s", "tests": [{"key": "t", "test_cases": [{"key": "a", "prompt": "q"}]}]}
    path = tmp_path / "suite.json"
    path.write_text(_repeat_key(suite | {"tests": []}, "tests", suite["tests"]))
    with pytest.raises(FormatError) as caught:
        import_file(path)
    assert caught.value.location == "line 5 column 3"
    assert caught.value.message.startswith("the key 'tests' is repeated (first on line 3)")


@pytest.mark.parametrize("format", ["assay", "auto"])
def test_a_repeated_rows_key_in_a_lab_is_refused(tmp_path: Path, format: str) -> None:
    lab = _lab_data()
    path = tmp_path / "lab.json"
    path.write_text(_repeat_key(lab | {"rows": []}, "rows", lab["rows"]))
    with pytest.raises(FormatError, match=r"line 6 column 3: the key 'rows' is repeated \(first on line 3\)"):
        import_file(path, format)


def test_a_repeated_dataset_key_in_an_eval_studio_lab_is_refused(tmp_path: Path, data_dir: Path) -> None:
    lab = json.loads((data_dir / "eval_studio_testlab.json").read_text())
    path = tmp_path / "lab.json"
    path.write_text(_repeat_key(lab | {"dataset": {"inputs": []}}, "dataset", lab["dataset"]))
    with pytest.raises(FormatError, match="the key 'dataset' is repeated"):
        import_file(path, "eval-studio-testlab")


def test_a_repeated_nested_key_names_its_line_and_path(tmp_path: Path) -> None:
    data = _lab_data()
    data["rows"][2]["actual_output"] = "__ANSWER__"
    text = json.dumps(data, indent=2).replace('"__ANSWER__"', '"a",\n      "actual_output": null')
    path = tmp_path / "lab.json"
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        import_file(path, "assay")
    first = next(number for number, line in enumerate(text.splitlines(), 1) if '"actual_output": "a",' in line)
    assert caught.value.location == f"line {first + 1} column 7"
    assert caught.value.message.startswith(f"rows[2]: the key 'actual_output' is repeated (first on line {first})")


def test_keys_equal_once_decoded_are_repeated_keys(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('[{"user_input": "q", "response": "a", "respons\\u0065": null}]')
    with pytest.raises(FormatError, match=r"line 1 column 39: \[0\]: the key 'response' is repeated"):
        import_file(path, "ragas")


@pytest.mark.parametrize("format", ["mlflow", "ragas", "auto"])
def test_a_repeated_key_in_a_jsonl_line_names_that_line(tmp_path: Path, format: str) -> None:
    question = "request" if format == "mlflow" else "user_input"
    path = tmp_path / "answers.jsonl"
    repeated = f'{{"{question}": "q2", "response": "a2", "response": null}}'
    path.write_text(f'{{"{question}": "q1", "response": "a1"}}\n\n{repeated}\n')
    with pytest.raises(FormatError) as caught:
        import_file(path, format)
    assert caught.value.location == f"line 3 column {repeated.rindex('response')}"
    assert caught.value.message.startswith("the key 'response' is repeated (first on line 3)")


def test_the_same_key_in_different_objects_is_no_repeat(tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(_lab_data()))
    assert len(import_file(path, "assay").rows) == 4


LONE_SURROGATES = [
    ('"\\ud800"', "\\ud800"),
    ('"x \\uDFFF y"', "\\udfff"),
    ('"\\ude00\\ud83d"', "\\ude00"),  # a pair in the wrong order is two lone surrogates
    ('"\\\\\\ud800"', "\\ud800"),  # an escaped backslash, then the surrogate
]


@pytest.mark.parametrize(("value", "escape"), LONE_SURROGATES)
@pytest.mark.parametrize(("format", "suffix"), FORMAT_SUFFIXES)
def test_a_lone_surrogate_is_refused_with_its_line_and_field(
    tmp_path: Path, format: str, suffix: str, value: str, escape: str
) -> None:
    record = f'{{"user_input": "q", "request": "q",\n "response": {value}}}'
    path = tmp_path / f"s{suffix}"
    path.write_text(record.replace("\n", "") if suffix == ".jsonl" else f"[{record}]")
    with pytest.raises(FormatError) as caught:
        import_file(path, format)
    where = "line 1" if suffix == ".jsonl" else "line 2"
    assert caught.value.location.startswith(f"{where} column ")
    field = "response" if suffix == ".jsonl" else "[0].response"
    assert caught.value.message.startswith(f"{field}: a string holds a lone surrogate ({escape}), which is not")


def test_a_lone_surrogate_in_an_assay_suite_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    text = (
        '{"schema_version": 1, "name": "s", "tests": [{"key": "t", "test_cases": '
        '[{"key": "a", "prompt": "q"}, {"key": "b", "prompt": "fine \\ud83d\\ude00 then \\ud800"}]}]}'
    )
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        import_file(path, "assay")
    column = text.rindex(r"\ud800") + 1
    assert caught.value.location == f"line 1 column {column}"
    assert caught.value.message.startswith("tests[0].test_cases[1].prompt: a string holds a lone surrogate (\\ud800)")


def test_a_lone_surrogate_in_a_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('[{"user_input": "q", "\\udc00": "x"}]')
    with pytest.raises(FormatError, match=r"line 1 column 23: \[0\]: a key holds a lone surrogate \(\\udc00\)"):
        import_file(path, "ragas")


def test_surrogate_pairs_and_escaped_backslashes_still_import(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"user_input": "smile \\ud83d\\ude00 and \\\\ud800 as text", "response": "\\uD83D\\uDE00"}\n')
    lab = import_file(path, "ragas")
    assert isinstance(lab, TestLab)
    row = lab.rows[0]
    assert (row.test_case.prompt, row.actual_output) == ("smile \U0001f600 and \\ud800 as text", "\U0001f600")


@pytest.mark.parametrize("cell", ['"[""\\ud800""]"', "\"['ok', '\\udc00']\""])
def test_a_lone_surrogate_in_a_csv_list_cell_is_refused(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "lab.csv"
    path.write_text(f"user_input,retrieved_contexts\nq,{cell}\n")
    with pytest.raises(FormatError) as caught:
        import_file(path, "ragas")
    assert caught.value.location.startswith("line 2, column retrieved_contexts[")
    assert "holds a lone surrogate" in caught.value.message


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("user_input,response,reference\nq1,a1,r1\nq2,a2 cut her", 3, "2 cell(s) but the header has 3 columns"),
        ('user_input,response,reference\nq1,a1,r1\nq2,"a2\nstill a2"\n', 3, "2 cell(s) but the header has 3 columns"),
        ("user_input,response\nq1\n", 2, 'no cell for ["response"]'),
        ("user_input,response\nq1,a1\nq2,a, with a comma\n", 3, "3 cells but the header has 2 columns"),
    ],
)
@pytest.mark.parametrize("format", ["ragas", "auto"])
def test_a_csv_row_with_too_few_or_too_many_cells_is_refused(
    tmp_path: Path, format: str, text: str, line: int, message: str
) -> None:
    path = tmp_path / "lab.csv"
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        import_file(path, format)
    assert caught.value.location == f"line {line}"
    assert message in caught.value.message


def test_blank_csv_lines_are_not_short_rows(tmp_path: Path) -> None:
    path = tmp_path / "lab.csv"
    path.write_text("user_input,response\nq1,a1\n\n   \nq2,a2\n")
    lab = import_file(path, "ragas")
    assert isinstance(lab, TestLab) and [row.actual_output for row in lab.rows] == ["a1", "a2"]


def test_a_short_row_in_a_labelled_csv_is_refused(tmp_path: Path) -> None:
    from assay.validity.labels import load_labelled_set

    path = tmp_path / "labels.csv"
    path.write_text("question,context,answer,label\nq,c,a,1\nq2,c2,a2\n")
    with pytest.raises(FormatError, match=r"labels\.csv: line 3: 3 cell\(s\) but the header has 4 columns"):
        load_labelled_set(path)


def test_a_short_row_in_judge_alignment_labels_is_refused(tmp_path: Path) -> None:
    from assay.judges.alignment import load_labels

    path = tmp_path / "labels.csv"
    path.write_text("test_case_key,label,reviewer\na,pass,ana\nb,fail\n")
    with pytest.raises(ValueError, match=r"labels\.csv: line 3: 2 cell\(s\) but the header has 3 columns"):
        load_labels(path)


def test_a_repeated_key_in_judge_alignment_labels_is_refused(tmp_path: Path) -> None:
    from assay.judges.alignment import load_labels

    path = tmp_path / "labels.json"
    path.write_text('[{"item_id": "e/m/model/c", "human_passes": true, "human_passes": false, "reviewer": "ana"}]')
    with pytest.raises(ValueError, match=r"labels\.json: line 1 column 51: \[0\]: the key 'human_passes' is repeated"):
        load_labels(path)
