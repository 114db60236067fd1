"""Decisions are evidence: a run's decisions are listed, fetched and verified like its reports, and
``assay artifacts bundle`` packs the run's evidence into a zip that ``verify --bundle`` re-checks offline,
naming any tampered member."""

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.apps.cli.main import app
from assay.config import load_settings
from assay.models.artifacts import Producer
from assay.mrm.approvals import DecisionStore, TopicDecision, decide, record_person
from assay.storage import ArtifactStore, open_artifact_store
from assay.storage.run_artifacts import decision_artifact_name
from assay.storage.runs import RunStates

runner = CliRunner()
RUN = "run-1"
DECISION = decision_artifact_name(RUN, "calibration")


@pytest.fixture(params=["folder", pytest.param("s3", marks=pytest.mark.slow)])
def artifacts(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ArtifactStore:
    """A signed store (a folder, or a bucket of the real SeaweedFS S3 server) holding run-1 (a report in two
    versions, two decisions, its state) and run-2; the commands below read the same store from settings."""
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_CONFIG", str(tmp_path / "absent.toml"))
    if request.param == "s3":
        seaweed = request.getfixturevalue("seaweed")
        for key, value in {
            "BACKEND": "s3",
            "ENDPOINT": seaweed.endpoint,
            "BUCKET": f"bundle-{tmp_path.name[-20:].lower().replace('_', '-')}",
            "SECURE": "false",
            "ACCESS_KEY": seaweed.access_key,
            "SECRET_KEY": seaweed.secret_key,
        }.items():
            monkeypatch.setenv(f"ASSAY_STORE__{key}", value)
    store = open_artifact_store(load_settings())
    assert type(store.store).__name__ == ("S3ObjectStore" if request.param == "s3" else "LocalObjectStore")
    RunStates(store.store).start("inputs", RUN, workflow="mrm-workflow")
    for content in ("first", "second"):
        store.put_json("mrm/demo/report.json", {"v": content}, producer=Producer(run_id=RUN))
    store.put_json("mrm/demo/report.json", {"v": "other"}, producer=Producer(run_id="run-2"))
    decisions = DecisionStore(store, RUN)
    decide("topic-modeling", decisions, None, TopicDecision(), "policy: keep every topic")
    record_person(decisions, "calibration", {"passed_item_ids": ["a"], "failed_item_ids": []}, "ana")
    return store


def _bundle(tmp_path: Path) -> Path:
    out = tmp_path / "run.zip"
    result = runner.invoke(app, ["artifacts", "bundle", RUN, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}" in result.stdout
    return out


def _rewrite(path: Path, member: str, edit: bytes) -> None:
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[member] = edit
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def test_decisions_are_listed_fetched_and_verified_like_any_artifact(artifacts: ArtifactStore) -> None:
    listed = runner.invoke(app, ["artifacts", "list", "--run", RUN, "--json"])
    fetched = runner.invoke(app, ["artifacts", "get", DECISION])

    names = [(m["name"], m["version"]) for m in json.loads(listed.stdout)]
    assert names == [
        ("mrm/demo/report.json", 1),
        ("mrm/demo/report.json", 2),
        (DECISION, 1),
        (decision_artifact_name(RUN, "topic-modeling"), 1),
    ]
    assert json.loads(fetched.stdout)["reviewer"] == "ana"
    assert [d.step for d in RunStates(artifacts.store).get(RUN).decisions] == ["topic-modeling", "calibration"]  # type: ignore[union-attr]
    assert runner.invoke(app, ["artifacts", "verify", "runs/"]).exit_code == 0


def test_a_bundle_holds_the_runs_evidence_and_verifies_offline(artifacts: ArtifactStore, tmp_path: Path) -> None:
    out = _bundle(tmp_path)

    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        record = json.loads(archive.read("bundle.json"))
    assert {"bundle.json", "run.json", f"artifacts/{DECISION}/v000001/calibration.json"} <= names
    assert {
        "artifacts/mrm/demo/report.json/v000002/manifest.json",
        "artifacts/mrm/demo/report.json/v000001/report.json",
    } <= names
    assert "artifacts/mrm/demo/report.json/v000003/report.json" not in names  # run-2's version
    assert sum(name.startswith("journal/") for name in names) == 4
    assert {(v["kind"], v["signature"], v["content_matches_manifest"]) for v in record["versions"]} == {
        ("artifact", "valid", True),
        ("decision", "valid", True),
    }
    assert record["mac"] and len(record["members"]) == len(names) - 1

    result = runner.invoke(app, ["artifacts", "verify", "--bundle", str(out)])
    assert result.exit_code == 0, result.output
    assert "verified 13 member(s) of the bundle and 4 journal entries: OK" in result.stdout


def test_a_tampered_bundle_member_is_reported_by_name(artifacts: ArtifactStore, tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    member = f"artifacts/{DECISION}/v000001/calibration.json"
    _rewrite(out, member, b'{"reviewer": "mallory"}')

    result = runner.invoke(app, ["artifacts", "verify", "--bundle", str(out)])

    assert result.exit_code == 1
    assert f"hash_mismatch {member}: the record says sha256" in result.output
    assert f"hash_mismatch {member}: does not match its manifest" in result.output


def test_a_rewritten_record_or_an_added_member_is_reported(artifacts: ArtifactStore, tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    with zipfile.ZipFile(out) as archive:
        record = json.loads(archive.read("bundle.json"))
    record["run_id"] = "run-9"
    _rewrite(out, "bundle.json", json.dumps(record).encode())
    _rewrite(out, "notes.txt", b"smuggled")

    result = runner.invoke(app, ["artifacts", "verify", "--bundle", str(out)])

    assert result.exit_code == 1
    assert "forged_bundle_record bundle.json: not signed by the signing key file" in result.output
    assert "unexpected_member notes.txt" in result.output


def test_without_the_key_a_bundle_check_says_what_it_could_not_check(
    artifacts: ArtifactStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _bundle(tmp_path)
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "elsewhere"))

    result = runner.invoke(app, ["artifacts", "verify", "--bundle", str(out)])

    assert result.exit_code == 3, result.output
    assert "not checked" in result.output and "could not be checked" in result.output
    assert "signatures not verified" in result.output and "--no-signatures" in result.output
    assert not (tmp_path / "elsewhere" / "keys").exists()

    accepted = runner.invoke(app, ["artifacts", "verify", "--bundle", str(out), "--no-signatures"])
    assert accepted.exit_code == 0, accepted.output
    assert "could not be checked" in accepted.output


def test_without_the_key_a_tampered_bundle_still_fails_with_one(
    artifacts: ArtifactStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _bundle(tmp_path)
    _rewrite(out, f"artifacts/{DECISION}/v000001/calibration.json", b'{"reviewer": "mallory"}')
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "elsewhere"))

    result = runner.invoke(app, ["artifacts", "verify", "--bundle", str(out), "--no-signatures"])

    assert result.exit_code == 1
    assert "hash_mismatch" in result.output


def test_bundling_an_unknown_run_or_verifying_a_non_bundle_fails_clearly(
    artifacts: ArtifactStore, tmp_path: Path
) -> None:
    unknown = runner.invoke(app, ["artifacts", "bundle", "run-404", "--out", str(tmp_path / "x.zip")])
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    junk = runner.invoke(app, ["artifacts", "verify", "--bundle", str(tmp_path / "junk.zip")])

    assert unknown.exit_code == 2 and "no run 'run-404'" in unknown.output
    assert junk.exit_code == 1 and "unreadable_bundle bundle.json" in junk.output


def _verify(path: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["artifacts", "verify", "--bundle", str(path)])
    return result.exit_code, " ".join(result.output.split())


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.parametrize("artifacts", ["folder"], indirect=True)
def test_a_tampered_copy_placed_before_the_genuine_member_of_the_same_name_is_reported(
    artifacts: ArtifactStore, tmp_path: Path
) -> None:
    out = _bundle(tmp_path)
    member = f"artifacts/{DECISION}/v000001/calibration.json"
    genuine = _members(out)
    with zipfile.ZipFile(out, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr(member, b'{"reviewer": "mallory"}')  # what `unzip` extracts first
        for name, data in genuine.items():
            archive.writestr(name, data)
    code, said = _verify(out)
    assert code == 1 and f"duplicate_member {member}: 2 members have this name" in said


@pytest.mark.parametrize("artifacts", ["folder"], indirect=True)
@pytest.mark.parametrize("damage", ["corrupt", "encrypted", "unknown method", "bomb"])
def test_a_member_that_cannot_be_read_is_named_not_an_unexpected_error(
    artifacts: ArtifactStore, tmp_path: Path, damage: str
) -> None:
    out = _bundle(tmp_path)
    member = "run.json"
    data = bytearray(out.read_bytes())
    with zipfile.ZipFile(out) as archive:
        info = archive.getinfo(member)
    header = info.header_offset
    if damage == "corrupt":  # flip a byte of the compressed data: a CRC or inflate error when read
        start = header + 30 + len(info.filename.encode()) + len(info.extra)
        data[start + 2] ^= 0xFF
    else:  # rewrite the flags, method or declared size in both the local header and the central directory
        central = next(
            offset for offset in _all(bytes(data), b"PK\x01\x02")
            if int.from_bytes(data[offset + 42 : offset + 46], "little") == header
        )  # fmt: skip
        if damage == "encrypted":
            for flags in (header + 6, central + 8):
                data[flags] |= 0x01
        elif damage == "unknown method":
            for method in (header + 8, central + 10):
                data[method : method + 2] = (99).to_bytes(2, "little")
        else:
            for size in (header + 22, central + 24):
                data[size : size + 4] = (4 * 1024**3 - 1).to_bytes(4, "little")
    out.write_bytes(bytes(data))
    code, said = _verify(out)
    expected = {
        "corrupt": "cannot be read",
        "encrypted": "encrypted",
        "unknown method": "compression method 99",
        "bomb": "declares 4294967295 bytes unpacked",
    }[damage]
    assert code == 1 and f"unreadable_member {member}: {expected}" in said, said
    assert "Traceback" not in said and "unexpected error" not in said


def _all(data: bytes, needle: bytes) -> list[int]:
    found, start = [], 0
    while (index := data.find(needle, start)) >= 0:
        found.append(index)
        start = index + 1
    return found


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_fifo_or_a_device_given_as_a_bundle_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    import os

    path = tmp_path / "run.zip"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    code, said = _verify(path)
    assert code == 2 and "is not a regular file" in said
