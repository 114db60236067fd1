"""The issue's secret check, end to end: ``assay evaluate --host FILE`` against a local OpenAI-compatible
server that needs a key, read from the environment variable the host file names. One case's error echoes the
key, as real APIs do, and derived copies of it (issue 25: cut short, upper-cased, split by zero-width
characters or spaces). Then every output is grepped for the key and for any copy of its first 12 characters:
the CLI's output, every file under the output folder and the Assay home (test lab, checkpoints, results,
artifacts, logs), the flow runs' parameters and the Prefect database itself (which holds the runs' logs)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.openai_server import OpenAIServer, serve_openai
from assay.testing.secrets import derived_copies, files_holding
from tests.support.prefect_server import PrefectServer

SECRET_ENV = "ASSAY_TEST_SUT_KEY"
SECRET = "sk-live-9Qw3Ez7Rt5Yu1Io8Pa2S"


def _suite(path: Path) -> Path:
    cases = [
        {"key": "ok1", "prompt": "How do I report a lost card?", "expected_output": "Call us."},
        {"key": "ok2", "prompt": "What is the Easy Access Saver rate?", "expected_output": "3.25% AER."},
        {"key": "leaky", "prompt": "[fault:401_echo] Who are you?", "expected_output": "An assistant."},
    ]
    path.write_text(json.dumps({"name": "secrets", "tests": [{"key": "t", "test_cases": cases}]}))
    return path


def _prefect_database_files(server: PrefectServer) -> list[Path]:
    """The SQLite files (database, WAL) of the server the flows report to."""
    return [path for path in server.home.glob("prefect.db*") if path.is_file()]


@pytest.mark.timeout(300)
def test_the_key_is_in_no_output_of_an_evaluate_run(
    tmp_path: Path, assay_home: Path, monkeypatch: pytest.MonkeyPatch, prefect_server: PrefectServer
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    with serve_openai(OpenAIServer(api_key=SECRET)) as server:
        host_file = tmp_path / "bank-rag.json"
        host_file.write_text(json.dumps({
            "key": "bank-rag", "type": "openai-compatible", "url": server.url, "llm_model_name": "local-model",
            "secret_ref": SECRET_ENV, "settings": {"temperature": 0},
        }))  # fmt: skip
        out = tmp_path / "out"
        result = CliRunner().invoke(
            app,
            ["evaluate", "--suite", str(_suite(tmp_path / "suite.json")), "--host", str(host_file),
             "--evaluators", "text_matching,answer_semantic_similarity", "--out", str(out)],
        )  # fmt: skip
        asked_with_key = [request for request in server.requests if SECRET in request.headers.get("authorization", "")]
    assert result.exit_code == 0, result.output
    assert len(asked_with_key) >= 3  # the key was really sent, to the server only
    lab = json.loads(next(out.rglob("test_lab.json")).read_text())
    errors = {row["test_case"]["key"]: row["error"] for row in lab["rows"]}
    assert errors["ok1"] is None and errors["ok2"] is None
    assert "[REDACTED:ASSAY_TEST_SUT_KEY]" in (errors["leaky"] or "")  # the echo was recorded, redacted
    # ... with the derived copies the server echoed too (cut short, upper-cased, zero-width and space split)
    assert (errors["leaky"] or "").count("[REDACTED:ASSAY_TEST_SUT_KEY]") == 1 + len(derived_copies(SECRET))

    assert SECRET not in result.output
    written = [path for root in (tmp_path, assay_home) for path in root.rglob("*") if path.is_file()]
    database = _prefect_database_files(prefect_server)
    assert database and any(b"bank-rag" in path.read_bytes() for path in database)  # the runs are in it
    written += database
    assert len(written) > 10
    leaks = [str(path) for path in written if path != host_file and SECRET.encode() in path.read_bytes()]
    assert leaks == []
    assert files_holding(SECRET, written) == []  # nor any copy from which the key's first 12 characters read back
