"""An MRM run's evidence leaves the store as one file a checker verifies offline: a real ``assay mrm run
--non-interactive`` on a small corpus, then ``assay artifacts bundle RUN_ID`` of it (its four step decisions in
it) and ``assay artifacts verify --bundle`` of the zip, which passes; a copy with one byte of its calibration
decision edited is refused, naming that member. The bundle format itself, on a synthetic run, is
``tests/storage/test_run_bundle.py``; here it is a whole run's export, as a validator hands it over."""

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.testing.processes import small_corpus
from tests.support.prefect_server import PrefectServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
runner = CliRunner()


def test_an_mrm_runs_bundle_verifies_offline_and_a_tampered_copy_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefect_server: PrefectServer
) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    corpus, out = small_corpus(tmp_path / "corpus"), tmp_path / "out"
    with prefect_server.reporting():
        arguments = ["mrm", "run", "--non-interactive", "--corpus", str(corpus), "--out", str(out)]
        arguments += ["--evaluator", "text_matching", "--per-topic-per-generator", "1"]
        arguments += ["--variation", "comma", "--adversarial", "base64"]
        result = runner.invoke(app, arguments)
        assert result.exit_code == 0, result.output
    run_id = json.loads((out / "run.json").read_text())["run_id"]

    bundle = tmp_path / "run.zip"
    made = runner.invoke(app, ["artifacts", "bundle", run_id, "--out", str(bundle)])
    assert made.exit_code == 0, made.output
    assert "4 decision(s)" in made.stdout and "sha256 " in made.stdout, made.stdout
    verified = runner.invoke(app, ["artifacts", "verify", "--bundle", str(bundle)])
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.rstrip().endswith(": OK"), verified.stdout

    tampered = tmp_path / "tampered.zip"
    shutil.copy(bundle, tampered)
    with zipfile.ZipFile(tampered) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    (member,) = [
        name for name in members if "/decisions/calibration.json/" in name and not name.endswith("manifest.json")
    ]
    edited = members[member].replace(b'"calibration"', b'"Calibration"', 1)
    assert edited != members[member]
    members[member] = edited
    with zipfile.ZipFile(tampered, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    refused = runner.invoke(app, ["artifacts", "verify", "--bundle", str(tampered)])
    assert refused.exit_code == 1, refused.output
    assert f"hash_mismatch {member}" in " ".join(refused.output.split()), refused.output
