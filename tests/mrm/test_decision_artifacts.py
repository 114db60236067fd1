"""Decisions are evidence: each is a signed, journaled artifact of its run, listed in the run's state and
``run.json``; a decision stored by an older Assay as a plain object is read and becomes the artifact."""

import json
from pathlib import Path

import pytest

from assay.models.mrm import Decision
from assay.mrm.approvals import DecisionStore, TopicDecision, decide, record_person
from assay.storage import ArtifactIntegrityError, ArtifactStore, LocalObjectStore, Signer
from assay.storage.run_artifacts import decision_artifact_name
from assay.storage.runs import RUN_FILE, RunStates


@pytest.fixture
def signed(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(LocalObjectStore(tmp_path / "store"), signer=Signer(key=b"k" * 32))


def test_a_decision_is_a_journaled_artifact_listed_in_run_json(signed: ArtifactStore, tmp_path: Path) -> None:
    states = RunStates(signed.store)
    record = states.start("inputs", export=str(tmp_path / "export"))
    store = DecisionStore(signed, record.run_id)

    taken = record_person(store, "topic-modeling", {"excluded_topic_ids": [2]}, "ana")
    states.finish(record)  # the flow's copy of the record predates the decision: it must not drop it

    name = decision_artifact_name(record.run_id, "topic-modeling")
    manifest, data = signed.get(name)
    assert Decision.model_validate_json(data) == taken
    assert signed.journal.find(name, 1) is not None and signed.verify().ok
    listed = json.loads((tmp_path / "export" / RUN_FILE).read_text())["decisions"]
    assert listed == [
        {
            "step": "topic-modeling",
            "decided_by": "person",
            "reviewer": "ana",
            "source": "prefect-ui",
            "decided_at": taken.decided_at,
            "artifact": name,
            "version": 1,
            "sha256": manifest.sha256,
        }
    ]
    assert states.get(record.run_id).status == "complete"  # type: ignore[union-attr]


def test_a_tampered_decision_is_refused_on_resume(signed: ArtifactStore) -> None:
    store = DecisionStore(signed, "run-1")
    decide("topic-modeling", store, None, TopicDecision(excluded_topic_ids=[1]), "policy")
    name = decision_artifact_name("run-1", "topic-modeling")
    key = f"artifacts/{name}/v000001/topic-modeling.json"
    signed.store.put(key, signed.store.get(key).replace(b"[\n", b"[\n    7,\n", 1), overwrite=True)

    with pytest.raises(ArtifactIntegrityError, match="does not match its manifest"):
        store.get("topic-modeling")


def test_a_decision_stored_before_decisions_were_artifacts_is_read_and_becomes_one(signed: ArtifactStore) -> None:
    legacy = Decision(step="calibration", decided_by="person", decision={"passed_item_ids": ["a"]}, reviewer="bo")
    signed.store.put("runs/run-1/decisions/calibration.json", legacy.model_dump_json().encode())

    found = DecisionStore(signed, "run-1").get("calibration")

    assert found is not None and (found.reviewer, found.decision) == ("bo", {"passed_item_ids": ["a"]})
    assert signed.latest(decision_artifact_name("run-1", "calibration")).version == 1
    assert not signed.store.exists("runs/run-1/decisions/calibration.json")
    assert DecisionStore(signed, "run-1").get("calibration") == found
