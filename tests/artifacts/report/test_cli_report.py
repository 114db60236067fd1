"""``assay report html|zip|csv`` on a run folder, and a clear error for a bad RUN."""

from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app
from tests.artifacts.report.report_lab import build_run


def test_report_commands(tmp_path: Path) -> None:
    folder = build_run(tmp_path / "run")
    runner = CliRunner()
    for command, name in (("html", "interpretation.html"), ("csv", "results.csv"), ("zip", "run-report-1.zip")):
        result = runner.invoke(app, ["report", command, str(folder)])
        assert result.exit_code == 0, result.output
        assert (folder / name).stat().st_size > 100 and name in result.output
    bad = runner.invoke(app, ["report", "html", str(tmp_path / "missing")])
    assert bad.exit_code == 2 and "no such run folder" in bad.output
