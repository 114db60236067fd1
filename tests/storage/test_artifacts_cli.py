"""``assay artifacts``: full hashes, filtering by run, and verify listing every problem and every blind spot."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.common import console
from assay.apps.cli.main import app
from assay.config import load_settings
from assay.models.artifacts import Producer
from assay.storage import ArtifactStore, open_artifact_store

runner = CliRunner()


@pytest.fixture
def artifacts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ArtifactStore:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_CONFIG", str(tmp_path / "absent.toml"))
    store = open_artifact_store(load_settings())
    for run in ("run-a", "run-b"):
        store.put_json("reports/r.json", {"run": run}, producer=Producer(run_id=run))
        store.put_json("reports/s.json", {"run": run}, producer=Producer(run_id=run))
    return store


def test_get_prints_the_full_sha256(artifacts: ArtifactStore, tmp_path: Path) -> None:
    manifest = artifacts.latest("reports/r.json")

    result = runner.invoke(app, ["artifacts", "get", "reports/r.json", "--out", str(tmp_path / "r.json")])

    assert result.exit_code == 0, result.output
    assert manifest.sha256 in result.output


def test_list_by_run_gives_every_version_that_run_produced(artifacts: ArtifactStore) -> None:
    latest = runner.invoke(app, ["artifacts", "list", "--json"])
    run_a = runner.invoke(app, ["artifacts", "list", "--run", "run-a", "--json"])

    assert {m["producer"]["run_id"] for m in json.loads(latest.stdout)} == {"run-b"}
    assert [(m["name"], m["version"]) for m in json.loads(run_a.stdout)] == [
        ("reports/r.json", 1),
        ("reports/s.json", 1),
    ]


LONG_NAME = "mrm/sample-bank-demo/failure-clustering/failure_clusters.json"
RUN_ID = "20261126T205153-abcdef12"


def test_list_fits_80_columns_without_cutting_a_name(artifacts: ArtifactStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "width", 80)  # rich reads COLUMNS once, when the console is made
    artifacts.put_json(LONG_NAME, {"clusters": []}, producer=Producer(run_id=RUN_ID))
    sha256 = artifacts.latest(LONG_NAME).sha256

    short = runner.invoke(app, ["artifacts", "list"])
    wide = runner.invoke(app, ["artifacts", "list", "--wide"])
    as_json = runner.invoke(app, ["artifacts", "list", "--json"])

    for result in (short, wide):
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80
        assert "…" not in result.stdout
        assert LONG_NAME in lines and f"run {RUN_ID} (1 version(s))" in lines
    assert sha256[:12] in short.stdout and sha256 not in short.stdout
    assert f"  sha256 {sha256}" in wide.stdout.splitlines()
    assert sha256 in {m["sha256"] for m in json.loads(as_json.stdout)}


def test_list_is_a_table_when_the_terminal_is_wide_enough(
    artifacts: ArtifactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "width", 200)

    result = runner.invoke(app, ["artifacts", "list", "--wide"])

    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("reports/")]
    assert [row[:3] for row in rows] == [["reports/r.json", "2", "21"], ["reports/s.json", "2", "21"]]
    assert rows[0][3] == artifacts.latest("reports/r.json").sha256


def test_verify_lists_every_problem(artifacts: ArtifactStore) -> None:
    assert runner.invoke(app, ["artifacts", "verify"]).exit_code == 0
    store = artifacts.store
    store.put("artifacts/reports/r.json/v000001/r.json", b'{"run": "forged"}', overwrite=True)
    store.put("artifacts/reports/s.json/v000002/notes.txt", b"smuggled")

    result = runner.invoke(app, ["artifacts", "verify"])

    assert result.exit_code == 1
    assert "size_mismatch reports/r.json v1" in result.output
    assert "unexpected_file reports/s.json v2" in result.output
    assert "2 problem(s)" in result.output


def test_verify_without_a_key_says_what_it_could_not_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_CONFIG", str(tmp_path / "absent.toml"))

    result = runner.invoke(app, ["artifacts", "verify"])

    assert result.exit_code == 0
    assert "not checked" in result.output and "could not be checked" in result.output
    assert not (tmp_path / "home" / "keys").exists()
