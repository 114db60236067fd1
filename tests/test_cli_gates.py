"""Gates and comparisons through the CLI, as a CI job runs them: exit codes, gates.json, comparison files.

Two ``assay evaluate --lab`` runs (one clean, one whose answers leak a card number) are made once for the
module, inside one temporary Prefect server; everything else reuses their folders."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.apps.cli import evaluate as evaluate_cli
from assay.apps.cli.main import app
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from tests.support.prefect_server import PrefectServer

runner = CliRunner()
CARD = "4111 1111 1111 1111"
CASES = [("fee", "What is the replacement fee?", "The fee is £25."),
         ("pin", "How do I reset my PIN?", "Reset your PIN in the app."),
         ("limit", "What is the daily limit?", "The daily limit is £500.")]  # fmt: skip
EVALUATORS = "pii_leakage,text_matching"


def _lab(leaking: set[str]) -> str:
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt=prompt, output_condition='"app" or "£"'),
            model_key="rag",
            actual_output=answer + (f" Your card is {CARD}." if key in leaking else ""),
            context=[RetrievedChunk(text=answer, doc_uri=f"{key}.md")],
        )
        for key, prompt, answer in CASES
    ]
    lab = TestLab(name="gates lab", models=[ModelHost(key="rag", type="testlab", name="Bank RAG")], rows=rows)
    return lab.model_dump_json()


def _evaluate(tmp: Path, name: str, leaking: set[str], *options: str) -> tuple[Any, Path]:
    lab = tmp / f"{name}.json"
    lab.write_text(_lab(leaking), encoding="utf-8")
    out = tmp / name
    arguments = ["evaluate", "--lab", str(lab), "--evaluators", EVALUATORS, "--out", str(out), *options]
    return runner.invoke(app, arguments), out


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, prefect_server: PrefectServer
) -> Iterator[dict[str, tuple[Any, Path]]]:
    tmp = tmp_path_factory.mktemp("gates")
    with prefect_server.reporting():
        yield {
            "clean": _evaluate(tmp, "clean", set(), "--fail-on", "high", "--gate", "pii_leakage>=0.9"),
            "leaky": _evaluate(tmp, "leaky", {"pin", "limit"}, "--fail-on", "high"),
        }


def test_clean_run_passes_its_gates_and_writes_gates_json(runs: dict[str, tuple[Any, Path]]) -> None:
    result, out = runs["clean"]
    assert result.exit_code == 0, result.output
    assert "all gates pass" in result.output
    gates = json.loads((out / "gates.json").read_text())
    assert gates["breached"] is False and gates["gates"][0]["value"] == 1.0 and gates["severity"]["matching"] == 0


def test_a_leaking_case_breaches_fail_on_high_with_exit_3(runs: dict[str, tuple[Any, Path]]) -> None:
    result, out = runs["leaky"]
    assert result.exit_code == 3, result.output
    assert "BREACH" in result.output and "breached: exit 3" in result.output
    problems = json.loads((out / "problems" / "problems_and_actions.json").read_text())["problems"]
    leaks = sorted(p["attributes"]["test_case_key"] for p in problems if p["attributes"].get("zero_tolerance"))
    assert leaks == ["limit", "pin"]  # one problem per leaking case
    assert json.loads((out / "gates.json").read_text())["severity"]["counted"]["high"] >= 2


def test_a_gate_typo_exits_2_before_any_flow_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def must_not_run(**_: Any) -> dict[str, Any]:
        raise AssertionError("the flow ran although a gate is invalid")

    monkeypatch.setattr(evaluate_cli, "_run_flow", must_not_run)
    lab = tmp_path / "lab.json"
    lab.write_text(_lab(set()), encoding="utf-8")
    base = ["evaluate", "--lab", str(lab), "--evaluators", EVALUATORS, "--out", str(tmp_path / "o")]
    typo = runner.invoke(app, [*base, "--gate", "pii_leakge>=0.9"])
    assert typo.exit_code == 2 and "pii_leakge" in typo.output and "did you mean pii_leakage" in typo.output
    malformed = runner.invoke(app, [*base, "--gate", "pii_leakage=>0.9"])
    assert malformed.exit_code == 2 and "pii_leakage=>0.9" in malformed.output
    out_of_range = runner.invoke(app, [*base, "--gate", "pii_leakage>=1.5"])
    assert out_of_range.exit_code == 2 and "between 0 and 1" in out_of_range.output
    assert "Exit codes" in runner.invoke(app, ["evaluate", "--help"]).output


def test_compare_finds_the_regression_and_writes_three_files(runs: dict[str, tuple[Any, Path]], tmp_path: Path) -> None:
    clean, leaky = runs["clean"][1], runs["leaky"][1]
    out = tmp_path / "cmp"
    regressed = runner.invoke(app, ["compare", str(clean), str(leaky), "--out", str(out), "--fail-on-regression"])
    assert regressed.exit_code == 3, regressed.output
    assert "2 newly fail" in regressed.output
    comparison = json.loads((out / "comparison.json").read_text())
    newly = sorted(c["test_case_key"] for c in comparison["case_changes"] if c["change"] == "newly fails")
    assert newly == ["limit", "pin"]
    assert any(p["status"] == "new" and p["severity"] == "high" for p in comparison["problem_changes"])
    assert "# Assay comparison" in (out / "comparison.md").read_text()
    assert "<html" in (out / "comparison.html").read_text()
    same = runner.invoke(app, ["compare", str(clean), str(clean), "--out", str(tmp_path / "same"),
                               "--fail-on-regression"])  # fmt: skip
    assert same.exit_code == 0, same.output
    gated = runner.invoke(app, ["compare", str(clean), str(leaky), "--out", str(tmp_path / "g"),
                                "--gate", "pii_leakage>=0.9"])  # fmt: skip
    assert gated.exit_code == 3 and "BREACH" in gated.output
    missing = runner.invoke(app, ["compare", str(clean), str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "nope" in missing.output
