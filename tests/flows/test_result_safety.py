"""Stored task results are data, never code: a result file planted in Prefect's storage must not run anything
on the next rerun of the same run id, and the rerun must still complete with correct results."""

import base64
import json
import pathlib
from collections.abc import Iterator
from pathlib import Path

import cloudpickle
import pytest
from assay.flows.evaluate import evaluate_flow

from assay.corpora import sample_data_path
from assay.models import TestSuite


class _TouchOnUnpickle:
    """Unpickling this object creates ``marker``: the proof that stored bytes were executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (pathlib.Path.touch, (self.marker,))


@pytest.fixture
def result_storage(tmp_path: Path) -> Iterator[Path]:
    """This test's own result folder, so the files it poisons are no other test's cache."""
    from prefect.settings import PREFECT_RESULTS_LOCAL_STORAGE_PATH, temporary_settings

    folder = tmp_path / "prefect-storage"
    with temporary_settings({PREFECT_RESULTS_LOCAL_STORAGE_PATH: folder}):
        yield folder


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    suite = TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())
    suite.tests = suite.tests[:1]
    suite.tests[0].test_cases = suite.tests[0].test_cases[:3]
    path = tmp_path / "suite.json"
    path.write_text(suite.model_dump_json())
    return path


def _pickled_payload(marker: Path) -> bytes:
    return base64.encodebytes(cloudpickle.dumps(_TouchOnUnpickle(marker)))


def _poison(storage: Path, marker: Path, keep_metadata: bool) -> int:
    """Overwrite every stored record with one whose serializer is pickle; whatever the layout (one file per
    record, or metadata and result in separate files), a loader that trusts the record runs the payload.
    With ``keep_metadata``, metadata files stay genuine and only the results they point to are replaced."""
    payload = _pickled_payload(marker)
    pickle_serializer = {"type": "pickle", "picklelib": "cloudpickle", "picklelib_version": None}
    poisoned = 0
    for path in [p for p in storage.rglob("*") if p.is_file()]:
        try:
            stored = json.loads(path.read_bytes())
        except ValueError:
            stored = None
        if isinstance(stored, dict) and "storage_key" in stored and "result" not in stored:
            if keep_metadata:
                continue
            metadata = {**stored, "serializer": pickle_serializer}
            path.write_text(json.dumps(metadata))
            Path(stored["storage_key"]).write_bytes(payload)
        else:
            record = {
                "metadata": {"serializer": pickle_serializer, "storage_key": str(path)},
                "result": payload.decode(),
            }
            path.write_text(json.dumps(record))
        poisoned += 1
    return poisoned


@pytest.mark.parametrize("keep_metadata", [False, True], ids=["records", "results-only"])
def test_a_planted_pickle_result_is_never_loaded(
    result_storage: Path, suite_file: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, keep_metadata: bool
) -> None:
    marker = tmp_path / "pwned"
    arguments = {
        "out": str(tmp_path / "out"),
        "suite": str(suite_file),
        "evaluators": ["text_matching"],
        "run_id": "planted-run",
    }
    first = evaluate_flow(**arguments)
    assert _poison(result_storage, marker, keep_metadata) >= 2

    second = evaluate_flow(**arguments)

    assert not marker.exists(), "a stored pickle was executed"
    refused = [record.getMessage() for record in caplog.records if "ignoring the cached result" in record.getMessage()]
    assert refused and all(str(result_storage) in message for message in refused)
    assert second["run_id"] == "planted-run"
    assert second["metrics"] == first["metrics"]


def test_a_json_record_naming_an_importable_decoder_is_refused(result_storage: Path, tmp_path: Path) -> None:
    """Prefect's own JSON serializer imports whatever ``object_decoder`` names: refused like pickle is."""
    from assay.tasks.result_safety import KEYS_FOLDER, ResultKeyStorage

    result_file = result_storage / "result"
    result_file.parent.mkdir(parents=True)
    result_file.write_text(json.dumps({"path": str(tmp_path / "pwned")}))
    key_file = result_storage / KEYS_FOLDER / "some-key"
    key_file.parent.mkdir()
    key_file.write_text(
        json.dumps({"storage_key": str(result_file), "serializer": {"type": "json", "object_decoder": "os.system"}})
    )
    with pytest.raises(ValueError, match="not written by Assay"):
        ResultKeyStorage().read_path("some-key")


def test_results_round_trip_and_foreign_types_are_refused() -> None:
    from assay.tasks.result_safety import AssayJSONSerializer

    from assay.models import TestSuite

    serializer = AssayJSONSerializer()
    suite = TestSuite(name="s", tests=[{"key": "t", "test_cases": [{"key": "a", "prompt": "q"}]}])
    value = (["x"], {"__assay_type__": "tuple", "n": 1.5}, [suite])
    assert serializer.loads(serializer.dumps(value)) == value
    foreign = b'{"assay-json": 1, "value": {"__assay_type__": "subprocess.Popen", "value": ["ls"]}}'
    with pytest.raises(ValueError, match="not an Assay model"):
        serializer.loads(foreign)
    with pytest.raises(TypeError, match="cannot be stored"):
        serializer.dumps({1, 2})
