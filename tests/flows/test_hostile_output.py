"""``assay evaluate`` on a test lab whose model keys and questions are hostile: the command completes and
prints them literally, and the leaderboard Markdown carries no HTML, no links and no broken table rows."""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.common import console
from assay.apps.cli.main import app
from assay.models import ModelHost, TestCase, TestLab, TestLabRow

KEYS = ["[/]", "<script>alert(1)</script>", "[bold red]PASS[/bold red]"]
QUESTIONS = ["[x](javascript:alert(1)) \x1b[31mcall us", "first line\n| injected | row |\nlast line"]


def hostile_lab() -> TestLab:
    cases = [
        TestCase(key=f"case-{index}", prompt=question, expected_output="0800", output_condition='"0800"')
        for index, question in enumerate(QUESTIONS)
    ]
    return TestLab(
        name="hostile \x1b[2J lab",
        models=[ModelHost(key=key, type="testlab", name=key) for key in KEYS],
        rows=[
            TestLabRow(test_case=case, model_key=key, actual_output="Call 0800." if index else "no idea")
            for key in KEYS
            for index, case in enumerate(cases)
        ],
    )


def test_hostile_keys_and_questions_are_shown_literally_and_kept_out_of_markdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "width", 400)
    lab_path = tmp_path / "lab.json"
    lab_path.write_text(hostile_lab().model_dump_json())
    out = tmp_path / "out"

    result = CliRunner().invoke(
        app, ["evaluate", "--lab", str(lab_path), "--evaluators", "text_matching", "--out", str(out)]
    )

    assert result.exit_code == 0, result.output
    for key in KEYS:
        assert key in result.stdout
    assert "\x1b" not in result.stdout
    markdown = (out / "text_matching" / "leaderboard.md").read_text()
    assert "<script" not in markdown and "](javascript:" not in markdown and "\x1b" not in markdown
    lines = markdown.splitlines()
    header = next(line for line in lines if line.startswith("| rank |"))
    table_rows = [line for line in lines if re.match(r"\| \d+ \|", line)]
    assert len(table_rows) == len(KEYS)
    assert all(row.count("|") == header.count("|") for row in table_rows)
    assert "injected" in markdown and not any(line.startswith("| injected") for line in lines)
