"""Traces read from an S3 prefix on a real S3-compatible server (SeaweedFS), as a collector exporting to a bucket
leaves them: ``assay traces import s3://BUCKET/PREFIX`` with the server and its credentials from Assay's store
settings. The credentials never reach the lab or the report; a missing bucket is an error, never created."""

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.seaweed import SeaweedServer
from tests.traces.rag_app import answer_from_context
from tests.traces.test_production_traces import QUESTIONS, _week

pytestmark = pytest.mark.slow
runner = CliRunner()


def _use(seaweed: SeaweedServer, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(home))
    monkeypatch.setenv("ASSAY_STORE__ENDPOINT", f"http://{seaweed.endpoint}")
    monkeypatch.setenv("ASSAY_STORE__ACCESS_KEY", seaweed.access_key)
    monkeypatch.setenv("ASSAY_STORE__SECRET_KEY", seaweed.secret_key)


def test_traces_under_an_s3_prefix_import_like_a_folder(
    seaweed: SeaweedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path, _, answers = _week(tmp_path / "week", answer_from_context, failing=False)
    client = seaweed.client()
    client.make_bucket("prod-traces")
    data = path.read_bytes()
    client.put_object("prod-traces", "bank/2026-11-27/traces.jsonl", io.BytesIO(data), len(data))
    client.put_object("prod-traces", "bank/README.txt", io.BytesIO(b"not traces"), 10)
    client.put_object("prod-traces", "other/traces.jsonl", io.BytesIO(b"{not json"), 9)  # outside the prefix
    _use(seaweed, monkeypatch, tmp_path / "home")
    out = tmp_path / "lab.json"
    result = runner.invoke(app, ["traces", "import", "s3://prod-traces/bank", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lab = json.loads(out.read_text())
    assert {row["test_case"]["prompt"].split(" Mail")[0] for row in lab["rows"]} == {
        question.split(" Mail")[0] for _, question in QUESTIONS
    }
    assert {row["actual_output"] for row in lab["rows"]} == set(answers.values())
    report = (tmp_path / "lab.import.json").read_text()
    assert "prod-traces/bank/2026-11-27/traces.jsonl" in report
    for text in (out.read_text(), report, result.output):
        assert seaweed.secret_key not in text


def test_a_missing_bucket_or_empty_prefix_exits_2_and_creates_nothing(
    seaweed: SeaweedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _use(seaweed, monkeypatch, tmp_path / "home")
    missing = runner.invoke(app, ["traces", "import", "s3://no-such-traces/x", "--out", str(tmp_path / "a.json")])
    assert missing.exit_code == 2 and "no bucket 'no-such-traces'" in missing.output, missing.output
    assert not seaweed.client().bucket_exists("no-such-traces")
    seaweed.client().make_bucket("empty-traces")
    empty = runner.invoke(app, ["traces", "import", "s3://empty-traces/x", "--out", str(tmp_path / "b.json")])
    assert empty.exit_code == 2 and "no .json or .jsonl object" in empty.output, empty.output
