"""The issue's "done when", as a new user runs it: the bundled sample endpoint (what ``assay serve-sample``
serves) on 127.0.0.1, then ``assay evaluate --suite <sample suite> --host examples/hosts/http-rag.json`` and the
OpenAI-compatible example beside it. Every case is answered with retrieved context, tokens and latency, and
the results are scored."""

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.apps.serve_sample import create_app
from assay.embeddings import EmbeddingEngine
from assay.testing.local_app import running_app

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "assay" / "data" / "sample_bank" / "suite.json"


def _example(name: str, url: str, folder: Path) -> Path:
    """The example file as shipped, pointed at this test's port instead of serve-sample's default 8765."""
    path = folder / name
    path.write_text((ROOT / "examples" / "hosts" / name).read_text().replace("http://127.0.0.1:8765", url))
    return path


def test_evaluate_the_sample_suite_through_the_example_host_files(tmp_path: Path, engine: EmbeddingEngine) -> None:
    cases = sum(len(test["test_cases"]) for test in json.loads(SUITE.read_text())["tests"])
    with running_app(create_app(lambda: engine)) as url:
        out = tmp_path / "out"
        result = CliRunner().invoke(
            app,
            ["evaluate", "--suite", str(SUITE), "--out", str(out), "--evaluators", "text_matching,groundedness",
             "--host", str(_example("http-rag.json", url, tmp_path)),
             "--host", str(_example("openai-compatible.json", url, tmp_path))],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "sample-rag-http" in result.output and "sample-rag-openai" in result.output
    lab = json.loads(next(out.rglob("test_lab.json")).read_text())
    rows = {model["key"]: [row for row in lab["rows"] if row["model_key"] == model["key"]] for model in lab["models"]}
    assert {key: len(value) for key, value in rows.items()} == {"sample-rag-http": cases, "sample-rag-openai": cases}
    for row in rows["sample-rag-http"]:
        assert row["error"] is None and row["actual_output"] and row["context"] and row["actual_duration"] is not None
        assert row["input_tokens"] and row["model_name"] == "assay-sample-rag"
    for row in rows["sample-rag-openai"]:
        assert row["error"] is None and row["cost_source"] == "price_table" and row["cost"] > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["sample-rag-http"]["groundedness"]
