"""The command line: fast start, catalogue listing, import/export and artifact commands with clear errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app

DATA = Path(__file__).parent / "formats" / "data"
runner = CliRunner()


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from assay.apps.cli.main import app; "
        "result = CliRunner().invoke(app, ['--help']); assert result.exit_code == 0, result.output; "
        "heavy = [m for m in ('torch', 'sentence_transformers', 'prefect', 'transformers') if m in sys.modules]; "
        "print(heavy)"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_evaluators_list_json_has_metadata() -> None:
    result = runner.invoke(app, ["evaluators", "list", "--json"])
    assert result.exit_code == 0, result.output
    specs = {spec["id"]: spec for spec in json.loads(result.stdout)}
    metric = specs["text_matching"]["metrics"][0]
    assert metric["key"] == "model_passes" and metric["is_primary"] and metric["threshold"] == 0.5
    assert specs["answer_semantic_similarity"]["needs"] == ["embeddings"]


def test_hosts_list_names_the_builtin_hosts() -> None:
    result = runner.invoke(app, ["hosts", "list"])
    assert result.exit_code == 0
    for host_type in ("sample-rag", "sample-rag-keyword", "testlab"):
        assert host_type in result.output


def test_suite_import_then_export_round_trips(tmp_path: Path) -> None:
    native = tmp_path / "suite.json"
    result = runner.invoke(
        app,
        [
            "suite",
            "import",
            str(DATA / "eval_studio_suite.json"),
            "--format",
            "eval-studio-suite",
            "--out",
            str(native),
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(native.read_text())["schema_version"] == 1
    exported = tmp_path / "back.json"
    result = runner.invoke(
        app, ["suite", "export", str(native), "--format", "eval-studio-suite", "--out", str(exported)]
    )
    assert result.exit_code == 0, result.output
    assert [case["prompt"] for case in json.loads(exported.read_text())["tests"][0]["test_cases"]] == [
        case["prompt"]
        for case in json.loads((DATA / "eval_studio_suite.json").read_text())["tests"][0]["test_cases"]
    ]


def test_malformed_suite_names_the_file_and_field(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "suite",
            "import",
            str(DATA / "suite_missing_prompt.json"),
            "--format",
            "eval-studio-suite",
            "--out",
            str(tmp_path / "x.json"),
        ],
    )
    assert result.exit_code == 2
    assert "suite_missing_prompt.json" in result.output and "prompt" in result.output
    assert not (tmp_path / "x.json").exists()


def test_unknown_format_lists_the_valid_ones(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "suite",
            "import",
            str(DATA / "eval_studio_suite.json"),
            "--format",
            "xml",
            "--out",
            str(tmp_path / "x.json"),
        ],
    )
    assert result.exit_code == 2
    assert "eval-studio-suite" in result.output


def test_artifacts_commands(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path))
    from assay.config import load_settings
    from assay.storage import ArtifactStore, open_object_store

    store = ArtifactStore(open_object_store(load_settings()))
    store.put_json("reports/r.json", {"v": 1}, filename="r.json")
    store.put_json("reports/r.json", {"v": 2}, filename="r.json")

    listing = runner.invoke(app, ["artifacts", "list", "--all-versions", "--json"])
    assert listing.exit_code == 0, listing.output
    assert [(m["name"], m["version"]) for m in json.loads(listing.stdout)] == [
        ("reports/r.json", 1),
        ("reports/r.json", 2),
    ]

    first = runner.invoke(app, ["artifacts", "get", "reports/r.json", "--version", "1"])
    assert json.loads(first.stdout) == {"v": 1}
    missing = runner.invoke(app, ["artifacts", "get", "reports/r.json", "--version", "9"])
    assert missing.exit_code == 2 and "reports/r.json" in missing.output

    assert runner.invoke(app, ["artifacts", "verify"]).exit_code == 0
    content_key = next(key for key in store.store.list("artifacts/reports") if key.endswith("v000001/r.json"))
    store.store.put(content_key, b'{"v": 666}', overwrite=True)
    tampered = runner.invoke(app, ["artifacts", "verify"])
    assert tampered.exit_code == 1
    assert "hash_mismatch" in tampered.output or "size_mismatch" in tampered.output


def test_mrm_step_parameters_from_a_file_and_options_and_bad_ones_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from assay.apps.cli.inputs import workflow_parameters

    steps = tmp_path / "steps.toml"
    steps.write_text('[topic_modeling]\nmin_topic_size = 4\n[robustness]\nintensities = ["low"]\n')
    chosen = workflow_parameters(steps, per_topic=2, variations=["comma"])
    assert chosen.topic_modeling.overrides() == {"min_topic_size": 4}
    assert (chosen.test_generation.per_topic, chosen.robustness.variation_perturbators) == (2, ["comma"])
    assert chosen.robustness.intensities == ["low"] and chosen.review.page_size == 25

    steps.write_text('[test_generation]\nper_topic = 0\n[calibration]\npage_szie = 3\n')
    result = runner.invoke(app, ["mrm", "run", "--non-interactive", "--parameters", str(steps)])
    assert result.exit_code == 2
    assert str(steps) in result.output and "test_generation.per_topic" in result.output
    assert "calibration.page_szie" in result.output and "Traceback" not in result.output


def test_the_old_page_size_name_is_read_as_review_page_size_with_a_note(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import typer

    from assay.apps.cli import mrm as mrm_cli
    from assay.apps.cli.inputs import workflow_parameters
    from assay.models.workflow import CalibrationParameters, MrmParameters

    steps = tmp_path / "steps.toml"
    steps.write_text("[calibration]\npage_size = 4\n")
    chosen = workflow_parameters(steps)
    assert chosen.review.page_size == 4
    assert chosen.model_dump()["calibration"] == {"per_metric": 20, "answers_per_form": 8}
    assert len(chosen.deprecation_notes) == 1 and "read as review.page_size = 4" in chosen.deprecation_notes[0]
    flow_given = MrmParameters(calibration=CalibrationParameters(page_size=5))  # how the flow builds them
    assert flow_given.review.page_size == 5 and len(flow_given.deprecation_notes) == 1
    assert MrmParameters().deprecation_notes == []

    steps.write_text("[calibration]\npage_size = 4\n[review]\npage_size = 7\n")  # the new name wins
    sent: dict = {}

    def started(**parameters: object) -> None:
        sent.update(parameters)
        raise typer.Exit(3)

    monkeypatch.setattr(mrm_cli, "run_workflow", started)
    result = runner.invoke(app, ["mrm", "run", "--non-interactive", "--parameters", str(steps)])
    assert result.exit_code == 3, result.output
    assert "calibration.page_size is deprecated" in result.output and "review.page_size = 7" in result.output
    assert sent["review"] == {"page_size": 7} and "page_size" not in sent["calibration"]
