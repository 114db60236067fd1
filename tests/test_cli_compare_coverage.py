"""``assay compare`` never passes vacuously: two run folders with nothing comparable exit 4 with a one-line
reason (with or without --fail-on-regression) and still write the files that say why; some overlap is compared
and counted. Run folders are written from in-memory runs: no Prefect, no host."""

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.compare import NOTHING_COMPARABLE
from assay.apps.cli.main import app
from tests.support.fake_runs import fake_run, write_run

runner = CliRunner()
CASES = [f"c{index}" for index in range(6)]
GOOD = {case: 0.9 for case in CASES}


def test_nothing_in_common_exits_4_with_the_reason_and_writes_the_files(tmp_path: Path) -> None:
    baseline = write_run(fake_run("base", {"rag": GOOD}), tmp_path / "base")
    renamed = write_run(fake_run("cur", {"rag": {f"new-{case}": 0.9 for case in CASES}}), tmp_path / "cur")
    for options in ([], ["--fail-on-regression"]):
        out = tmp_path / f"cmp{len(options)}"
        result = runner.invoke(app, ["compare", str(baseline), str(renamed), "--out", str(out), *options])
        assert result.exit_code == NOTHING_COMPARABLE == 4, result.output
        printed = " ".join(result.output.split())  # the console wraps long lines
        assert "error: nothing comparable: no test case key is in both runs" in printed and "(exit 4)" in printed
        assert "no case in common" in printed
        comparison = json.loads((out / "comparison.json").read_text())
        assert comparison["schema_version"] == 2 and comparison["compared"]["metrics_compared"] == 0
        assert "**Nothing was comparable**" in (out / "comparison.md").read_text()
        assert "Nothing was comparable" in (out / "comparison.html").read_text()
    assert "4 nothing comparable" in " ".join(runner.invoke(app, ["compare", "--help"]).output.split())


def test_some_overlap_is_compared_and_counted(tmp_path: Path) -> None:
    baseline = write_run(fake_run("base", {"rag": GOOD, "old": GOOD}), tmp_path / "base")
    current = write_run(fake_run("cur", {"rag": {**GOOD, "c5": None, "extra": 0.9}}), tmp_path / "cur")
    out = tmp_path / "cmp"
    result = runner.invoke(app, ["compare", str(baseline), str(current), "--out", str(out), "--fail-on-regression"])
    assert result.exit_code == 0, result.output
    printed = " ".join(result.output.split())  # the console wraps long lines
    assert "compared: 1 of 1" in printed and "6 test cases in both runs, 5 scored in both" in printed
    assert "left out model old: model only in one run (only in the baseline)" in printed
    compared = json.loads((out / "comparison.json").read_text())["compared"]
    assert (compared["metrics_compared"], compared["cases_matched"], compared["cases_compared"]) == (1, 6, 5)
