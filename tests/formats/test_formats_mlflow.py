import json
from pathlib import Path

import pytest

from assay.formats.errors import FormatError, stable_key
from assay.formats.mlflow import export_mlflow, import_mlflow
from assay.models import ConversationTurn, ModelHost, RetrievedChunk, TestLab, TestSuite


def _write_jsonl(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_records_with_responses_import_as_a_lab(data_dir: Path) -> None:
    lab = import_mlflow(data_dir / "mlflow_lab.jsonl")
    assert isinstance(lab, TestLab)
    assert lab.name == "mlflow_lab"
    assert lab.models == [ModelHost(key="imported", type="imported")]
    first, second = lab.rows
    assert first.model_key == "imported"
    assert first.test_case.key == "spark-1"
    assert first.test_case.prompt == "What is the difference between reduceByKey and groupByKey in Spark?"
    assert (
        first.test_case.expected_output
        == "reduceByKey combines values per key before the shuffle; groupByKey does not."
    )
    assert first.test_case.expected_retrieved_doc_uris == ["docs/rdd-programming-guide.md"]
    assert first.test_case.guidelines == [
        "The response must be in English",
        "The response must be clear, coherent, and concise",
    ]
    assert first.actual_output.startswith("reduceByKey aggregates data before shuffling")
    assert first.context == [
        RetrievedChunk(
            text="reduceByKey merges the values for each key using an associative reduce function.",
            doc_uri="docs/rdd-programming-guide.md",
            rank=0,
        ),
        RetrievedChunk(text="groupByKey groups the values for each key into a single sequence.", rank=1),
    ]
    assert second.actual_output == "No, RDDs are immutable."


def test_chat_request_keeps_earlier_messages_as_turns(data_dir: Path) -> None:
    case = import_mlflow(data_dir / "mlflow_lab.jsonl").rows[1].test_case
    assert case.prompt == "Is it mutable?"
    assert case.turns == [
        ConversationTurn(role="system", content="You answer questions about Apache Spark."),
        ConversationTurn(role="user", content="What is an RDD?"),
        ConversationTurn(role="assistant", content="A resilient distributed dataset."),
    ]


def test_named_guidelines_are_flattened_in_order(data_dir: Path) -> None:
    case = import_mlflow(data_dir / "mlflow_lab.jsonl").rows[1].test_case
    assert case.guidelines == [
        "The response must be in English",
        "The response must be one sentence",
        "The response must not use jargon",
    ]


def test_model_key_names_the_imported_model(data_dir: Path) -> None:
    lab = import_mlflow(data_dir / "mlflow_lab.jsonl", model_key="agent-v2")
    assert [model.key for model in lab.models] == ["agent-v2"]
    assert {row.model_key for row in lab.rows} == {"agent-v2"}


def test_records_without_responses_import_as_a_suite(data_dir: Path) -> None:
    suite = import_mlflow(data_dir / "mlflow_suite.json")
    assert isinstance(suite, TestSuite)
    assert suite.name == "mlflow_suite"
    [test] = suite.tests
    first, second = test.test_cases
    assert first.key == "delta-1"
    assert (
        first.expected_output == "An open-source storage layer that brings ACID transactions to data lakes."
    )
    assert first.expected_retrieved_doc_uris == ["docs/delta-intro.md"]
    assert second.key == stable_key("mlflow", 1, "How do I time travel in Delta Lake?")
    assert second.guidelines == ["The response must mention VERSION AS OF"]


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize("fixture", ["mlflow_lab.jsonl", "mlflow_suite.json"])
def test_round_trip(data_dir: Path, tmp_path: Path, fixture: str, suffix: str) -> None:
    original = import_mlflow(data_dir / fixture)
    path = tmp_path / (Path(fixture).stem + suffix)
    export_mlflow(original, path)
    assert import_mlflow(path) == original


def test_export_writes_chat_requests_and_context(data_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    export_mlflow(import_mlflow(data_dir / "mlflow_lab.jsonl"), path)
    first, second = json.loads(path.read_text())
    assert first["retrieved_context"][1] == {
        "content": "groupByKey groups the values for each key into a single sequence."
    }
    assert first["expected_retrieved_context"] == [{"doc_uri": "docs/rdd-programming-guide.md"}]
    assert second["request"]["messages"][-1] == {"role": "user", "content": "Is it mutable?"}
    assert len(second["request"]["messages"]) == 4


def test_lab_with_several_models_needs_a_model_key(rich_lab: TestLab, tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        export_mlflow(rich_lab, tmp_path / "out.jsonl")
    assert (
        caught.value.message
        == "the lab has models ['rag', 'llm']; choose one with --model-key (one model per file)"
    )
    export_mlflow(rich_lab, tmp_path / "out.jsonl", model_key="rag")
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [record["response"] for record in records] == [
        "RAG answer to capital",
        "RAG answer to capital-typo",
        "RAG answer to river",
    ]


def test_the_export_command_lets_a_user_choose_the_model(rich_lab: TestLab, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from assay.apps.cli.main import app

    lab = tmp_path / "lab.json"
    lab.write_text(rich_lab.model_dump_json())
    out = tmp_path / "out.jsonl"
    refused = CliRunner().invoke(app, ["suite", "export", str(lab), "--format", "mlflow", "--out", str(out)])
    assert refused.exit_code == 2 and "choose one with --model-key" in refused.output
    chosen = CliRunner().invoke(
        app, ["suite", "export", str(lab), "--format", "mlflow", "--out", str(out), "--model-key", "rag"]
    )
    assert chosen.exit_code == 0, chosen.output
    responses = [json.loads(line)["response"] for line in out.read_text().splitlines()]
    assert responses and all(response.startswith("RAG answer") for response in responses)


@pytest.mark.parametrize(
    ("record", "location", "message"),
    [
        (
            {"response": "x"},
            "line 1, request",
            "field required (expected a string or an object with messages)",
        ),
        ({"request": 42}, "line 1, request", "expected a string or an object with messages (got 42)"),
        (
            {
                "request": {
                    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
                }
            },
            "line 1, request.messages[1].role",
            "expected the last message from the user (got 'assistant')",
        ),
        (
            {"request": {"messages": [{"role": "robot", "content": "hi"}]}},
            "line 1, request.messages[0].role",
            "input should be 'system', 'user', 'assistant' or 'tool' (got \"robot\")",
        ),
        (
            {"request": {"messages": [{"role": "user"}]}},
            "line 1, request.messages[0].content",
            "field required (expected a string)",
        ),
        (
            {"request": "q", "guidelines": {"tone": "polite"}},
            "line 1, guidelines.tone",
            'expected a list of strings (got "polite")',
        ),
        ({"request": "q", "guidelines": [1]}, "line 1, guidelines[0]", "expected a string (got 1)"),
        (
            {"request": "q", "retrieved_context": [{"content": 3}]},
            "line 1, retrieved_context[0].content",
            "expected a string (got 3)",
        ),
        (
            {"request": "q", "expected_retrieved_context": [{}]},
            "line 1, expected_retrieved_context[0].doc_uri",
            "field required (expected a string)",
        ),
    ],
)
def test_malformed_records_name_line_and_field(
    tmp_path: Path, record: dict, location: str, message: str
) -> None:
    with pytest.raises(FormatError) as caught:
        import_mlflow(_write_jsonl(tmp_path, record))
    assert (caught.value.location, caught.value.message) == (location, message)


def test_json_list_errors_use_json_paths(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"records": [{"request": "a"}, {"request": None}]}))
    with pytest.raises(FormatError) as caught:
        import_mlflow(path)
    assert caught.value.location == "records[1].request"


def test_duplicate_request_ids_are_reported(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path, {"request_id": "r", "request": "a"}, {"request_id": "r", "request": "b"})
    with pytest.raises(FormatError) as caught:
        import_mlflow(path)
    assert (caught.value.location, caught.value.message) == ("line 2, request_id", "duplicate key 'r'")


def test_unsupported_extension_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        import_mlflow(tmp_path / "set.csv")
    assert caught.value.message == "expected a .json or .jsonl file for mlflow (got '.csv')"


def test_jsonl_keeps_unicode_line_separators_inside_strings(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path, {"request": "a\u2028b", "response": "c\x0cd"})
    export_mlflow(import_mlflow(path), path)
    assert "\u2028" in path.read_text()  # written unescaped, so the reader must not split on it
    [row] = import_mlflow(path).rows
    assert (row.test_case.prompt, row.actual_output) == ("a\u2028b", "c\x0cd")
