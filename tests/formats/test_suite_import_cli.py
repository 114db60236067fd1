"""``assay suite import`` names the format it read and everything the file held that Assay could not carry."""

from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.formats import import_file

DATA = Path(__file__).parent / "data"
runner = CliRunner()


def test_the_detected_format_and_the_unmapped_assertions_are_printed(tmp_path: Path) -> None:
    out = tmp_path / "suite.json"
    result = runner.invoke(app, ["suite", "import", str(DATA / "promptfoo" / "csv-metadata_tests.csv"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "format: promptfoo (detected from the content)" in result.output
    assert "not carried: assert type llm-rubric not mapped (3 records)" in result.output
    assert import_file(out, "assay").case_count == 3


def test_the_prompt_variable_option_reaches_the_reader(tmp_path: Path) -> None:
    source = DATA / "promptfoo" / "jsonl-test-cases_cases.jsonl"
    out = tmp_path / "suite.json"
    failed = runner.invoke(app, ["suite", "import", str(source), "-o", str(out), "--format", "promptfoo"])
    assert failed.exit_code == 2 and "name it with --prompt-var" in failed.output
    result = runner.invoke(
        app, ["suite", "import", str(source), "-o", str(out), "--prompt-var", "text", "-f", "promptfoo"]
    )
    assert result.exit_code == 0, result.output
    assert "format: promptfoo (as named)" in result.output


def test_a_wrong_format_is_one_line_naming_the_likely_one(tmp_path: Path) -> None:
    source = DATA / "deepeval" / "deepeval_goldens.csv"
    result = runner.invoke(app, ["suite", "import", str(source), "-o", str(tmp_path / "s.json"), "-f", "ragas"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "this looks like deepeval" in lines[0]
