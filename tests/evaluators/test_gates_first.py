"""A misspelled gate metric is refused first, before any lab, suite, judge or model is read (issue 25, item 19).

The check runs the real ``assay evaluate`` in a fresh interpreter, so what it imported is exactly what the
command imported: no embedding model, no torch, no Prefect server.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

from assay.models import ModelHost, TestCase, TestLab, TestLabRow

HEAVY_MODULES = ("torch", "sentence_transformers", "transformers", "prefect.server")

_RUN_CLI = """
import json, sys
from assay.apps.cli.main import app
try:
    app(sys.argv[1:], prog_name="assay")
except SystemExit as done:
    code = done.code
heavy = sorted(name for name in json.loads(HEAVY) if name in sys.modules)
print("RESULT " + json.dumps({"exit": code, "heavy": heavy}))
"""


def _lab(folder: Path) -> Path:
    row = TestLabRow(test_case=TestCase(key="fee", prompt="What is the fee?"), model_key="m", actual_output="£25.")
    path = folder / "lab.json"
    path.write_text(TestLab(name="lab", models=[ModelHost(key="m", type="t")], rows=[row]).model_dump_json())
    return path


def _evaluate(folder: Path, evaluators: str, gate: str) -> tuple[dict, str, float]:
    arguments = ["evaluate", "--lab", str(_lab(folder)), "--evaluators", evaluators, "--out", str(folder / "out")]
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {json.dumps(json.dumps(HEAVY_MODULES))}\n{_RUN_CLI}", *arguments,
         "--gate", gate],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    result_line = next(line for line in completed.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(result_line.removeprefix("RESULT ")), completed.stdout + completed.stderr, elapsed


def test_a_misspelled_gate_metric_exits_2_naming_it_and_the_known_ones_before_anything_is_loaded(
    tmp_path: Path,
) -> None:
    result, output, elapsed = _evaluate(tmp_path, "all", "groundednes>=0.8")
    assert result["exit"] == 2, output
    assert "groundednes" in output and "did you mean groundedness" in output
    assert "pii_leakage (model_passes" in output  # the known evaluators and their metrics are listed
    assert result["heavy"] == [], f"imported before the gate was refused: {result['heavy']}"
    assert not (tmp_path / "out").exists()  # refused before the output folder was even made
    assert elapsed < 30, f"took {elapsed:.1f}s"


def test_a_misspelled_metric_of_a_named_evaluator_lists_its_metrics(tmp_path: Path) -> None:
    result, output, _ = _evaluate(tmp_path, "pii_leakage", "pii_leakage.model_pases>=0.9")
    assert result["exit"] == 2 and "'model_pases'" in output and "model_passes" in output, output
    assert result["heavy"] == []
    assert not (tmp_path / "out").exists()  # refused before any other input was checked


def test_under_evaluators_all_a_gate_may_name_any_registered_metric() -> None:
    from assay.apps.cli.gates import validated_gates

    gates = validated_gates(["groundedness>=0.8", "pii_leakage.model_failures<=0.1"], ["all"])
    assert [gate.target for gate in gates] == ["groundedness", "pii_leakage.model_failures"]
