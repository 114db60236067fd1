"""``assay artifacts``: full hashes, filtering by run, and verify listing every problem and every blind spot."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli.main import app
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


def test_list_filters_by_run(artifacts: ArtifactStore) -> None:
    latest = runner.invoke(app, ["artifacts", "list", "--run", "run-a", "--json"])
    every = runner.invoke(app, ["artifacts", "list", "--all-versions", "--run", "run-a", "--json"])

    assert json.loads(latest.stdout) == []  # run-b wrote the latest versions
    assert [(m["name"], m["version"]) for m in json.loads(every.stdout)] == [
        ("reports/r.json", 1),
        ("reports/s.json", 1),
    ]


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
