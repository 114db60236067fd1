"""``assay perturb`` and ``assay perturbators list`` on a small app wired like the real one."""

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from assay.apps.cli.perturb import perturb, perturbators_app
from assay.formats import export_file, import_file
from assay.models import Test, TestCase, TestLab, TestSuite

app = typer.Typer()
app.command("perturb")(perturb)
app.add_typer(perturbators_app, name="perturbators")
runner = CliRunner()


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    cases = [TestCase(key="a", prompt="Why is my yearly fee so high?"), TestCase(key="b", prompt="What is the fee?")]
    path = tmp_path / "suite.json"
    export_file(TestSuite(name="s", tests=[Test(key="t", test_cases=cases)]), path, "assay")
    return path


def test_perturb_writes_the_suite_with_twins(suite_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = [str(suite_file), "--perturbator", "qwerty", "--intensity", "high", "--out", str(out), "--seed", "4"]
    result = runner.invoke(app, ["perturb", *args])
    assert result.exit_code == 0, result.output
    assert "added 2 perturbed cases (qwerty, high, seed 4, 1 left unchanged)" in result.output
    written = import_file(out, "assay")
    assert isinstance(written, TestSuite)
    assert [case.key for _, case in written.cases()] == ["a", "a~qwerty-high", "b", "b~qwerty-high"]
    assert written.tests[0].test_cases[1].prompt == "Whz is mz zearlz fee so high?"
    assert "seed:4" in written.tests[0].test_cases[1].categories


def test_perturb_only_the_given_keys(suite_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = [str(suite_file), "-p", "comma", "-i", "low", "-o", str(out), "--key", "b"]
    result = runner.invoke(app, ["perturb", *args])
    assert result.exit_code == 0, result.output
    assert [case.key for _, case in import_file(out, "assay").cases()] == ["a", "b", "b~comma-low"]


@pytest.mark.parametrize(
    ("perturbator", "intensity", "message"),
    [("typos", "low", "unknown perturbator 'typos'"), ("comma", "extreme", "unknown intensity 'extreme'")],
)
def test_unknown_perturbator_or_intensity_exits_2(
    suite_file: Path, tmp_path: Path, perturbator: str, intensity: str, message: str
) -> None:
    out = tmp_path / "out.json"
    args = [str(suite_file), "-p", perturbator, "-i", intensity, "-o", str(out)]
    result = runner.invoke(app, ["perturb", *args])
    assert result.exit_code == 2 and message in result.output
    assert not out.exists()


def test_a_test_lab_is_refused(tmp_path: Path) -> None:
    lab = tmp_path / "lab.json"
    export_file(TestLab(name="l", rows=[]), lab, "assay")
    result = runner.invoke(app, ["perturb", str(lab), "-p", "comma", "-i", "low", "-o", str(tmp_path / "o.json")])
    assert result.exit_code == 2 and "expected a test suite, got a TestLab" in result.output


def test_perturbators_list_shows_every_id_and_kind() -> None:
    result = runner.invoke(app, ["perturbators", "list", "--json"])
    assert result.exit_code == 0, result.output
    listed = {item["id"]: item for item in json.loads(result.stdout)}
    assert listed["base64"]["kind"] == "adversarial" and listed["comma"]["kind"] == "input_variation"
    assert listed["random_delete"]["amounts"] == {"low": 0.03, "medium": 0.06, "high": 0.12}
    table = runner.invoke(app, ["perturbators", "list"])
    assert table.exit_code == 0 and "contextual_misinformation" in table.output
