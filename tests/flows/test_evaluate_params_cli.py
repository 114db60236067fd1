"""``assay evaluate --param`` reaches the evaluator: the real command and flow on a two-case lab."""

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.models import ModelHost, TestCase, TestLab, TestLabRow


def test_a_param_reaches_the_evaluator_and_results_json(tmp_path: Path) -> None:
    # With the stemmer "paying" matches "pays" (both become "pay"): ROUGE-L 1.0 instead of 0.5.
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt="q", expected_output=expected), model_key="m", actual_output=answer
        )
        for key, expected, answer in (("a", "it pays", "it paying"), ("b", "cards expire", "cards expired"))
    ]
    lab = tmp_path / "lab.json"
    lab.write_text(
        TestLab(name="params lab", models=[ModelHost(key="m", type="imported")], rows=rows).model_dump_json()
    )
    out = tmp_path / "out"
    arguments = ["evaluate", "--lab", str(lab), "--out", str(out), "--evaluators", "rouge"]
    result = CliRunner().invoke(app, [*arguments, "--param", "rouge.use_stemmer=true"])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "rouge" / "results.json").read_text())
    parameters = {entry["name"]: entry["value"] for entry in document["evaluator"]["parameters"]}
    assert parameters["use_stemmer"] is True
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["m"]["rouge"]["rouge_l"]["mean"] == 1.0
