"""``assay evaluate`` through the CLI, inside the session's Prefect test server."""

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.models import TestSuite

runner = CliRunner()


def test_evaluate_prints_a_table_and_writes_results(tmp_path: Path) -> None:
    suite = TestSuite(
        name="cli suite",
        tests=[{"key": "t", "test_cases": [
            {"key": "a", "prompt": "How do I report a lost card?", "expected_output": "Call 0800 555 0199.",
             "output_condition": '"0800 555 0199"'},
            {"key": "b", "prompt": "What is the Easy Access Saver rate?", "expected_output": "3.25% AER."},
        ]}],
    )
    suite_path = tmp_path / "suite.json"
    suite_path.write_text(suite.model_dump_json())
    out = tmp_path / "out"
    result = runner.invoke(app, ["evaluate", "--suite", str(suite_path), "--host", "sample-rag", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "sample-rag" in result.output and "2/2" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["sample-rag"]["text_matching"]["model_passes"]["scored"] == 1
    assert (out / "answer_semantic_similarity" / "results.json").exists()


def test_bad_arguments_fail_fast_with_clear_errors(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["evaluate", "--suite", str(tmp_path / "nope.json"), "--out", str(tmp_path)])
    assert missing.exit_code == 2 and "nope.json" in missing.output
    unknown = runner.invoke(app, ["evaluate", "--lab", "x.json", "--evaluators", "bogus", "--out", str(tmp_path)])
    assert unknown.exit_code == 2 and "unknown evaluator 'bogus'" in unknown.output
    both = runner.invoke(app, ["evaluate", "--lab", "x.json", "--host", "sample-rag", "--out", str(tmp_path)])
    assert both.exit_code == 2 and "--host is for --suite" in both.output
    host = runner.invoke(app, ["evaluate", "--suite", "s.json", "--host", "nosuch", "--out", str(tmp_path)])
    assert host.exit_code == 2 and "unknown host type 'nosuch'" in host.output
