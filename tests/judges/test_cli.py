"""``assay judges check`` and ``assay judges templates`` as a user runs them."""

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.judge_server import JUDGE_MODEL, JudgeServer, serve_judge

runner = CliRunner()


def _file(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "judge.toml"
    path.write_text(f'base_url = "{url}"\nmodel = "{JUDGE_MODEL}"\n')
    return path


def test_check_reports_the_verdict_the_mode_and_log_probabilities(tmp_path: Path) -> None:
    with serve_judge(JudgeServer()) as judge:
        result = runner.invoke(app, ["judges", "check", str(_file(tmp_path, judge.url))])
    assert result.exit_code == 0, result.output
    assert '"sexist": false' in result.output and "structured output: json_schema" in result.output
    assert "log-probabilities of a given text: yes" in result.output
    with serve_judge(JudgeServer(response_format=False, logprobs=False)) as judge:
        result = runner.invoke(app, ["judges", "check", str(_file(tmp_path, judge.url))])
    assert result.exit_code == 0, result.output
    assert "structured output: prompt" in result.output and "log-probabilities of a given text: no" in result.output


def test_check_says_why_a_judge_cannot_be_reached(tmp_path: Path) -> None:
    result = runner.invoke(app, ["judges", "check", str(_file(tmp_path, "http://127.0.0.1:9/v1"))])
    assert result.exit_code == 1 and "failed (connection)" in result.output
    missing = runner.invoke(app, ["judges", "check", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2 and "nope.toml" in missing.output


def test_templates_list_every_shipped_template_with_its_version() -> None:
    result = runner.invoke(app, ["judges", "templates", "--json"])
    assert result.exit_code == 0
    templates = {item["id"]: item for item in json.loads(result.stdout)}
    assert templates["sexism"]["version"] == "1" and templates["sexism"]["schema"]["title"] == "sexism"
    assert {"ragas_claims", "databricks_correctness", "fact_check_verdict"} <= set(templates)
