"""A run's state and decisions live in the object store: on S3 (SeaweedFS) a second machine, with nothing on
its disk, continues the interrupted run with the decisions already taken; a completed run is never continued."""

from assay.mrm.approvals import DecisionStore, TopicDecision, decide, record_person
from assay.storage.artifacts import ArtifactStore
from assay.storage.runs import RunStates, fingerprint
from assay.testing.seaweed import SeaweedServer


def test_an_interrupted_run_continues_on_another_machine_with_its_decisions(seaweed: SeaweedServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bucket = "runs-shared"
    first_machine = seaweed.object_store(bucket=bucket)
    inputs = fingerprint({"corpus": "sha-of-documents"}, {"per_topic": 3})
    started = RunStates(first_machine).start(
        inputs, workflow="mrm-workflow", parameters={"per_topic": 3}, export=str(tmp_path / "first")
    )
    record_person(
        DecisionStore(ArtifactStore(first_machine), started.run_id),
        "topic-modeling",
        {"excluded_topic_ids": [2]},
        "ana",
    )
    assert (tmp_path / "first" / "run.json").exists()  # the export folder gets a copy, not the state

    second_machine = seaweed.object_store(bucket=bucket)  # a new client: nothing shared but the bucket
    resumed = RunStates(second_machine).start(inputs, export=str(tmp_path / "second"))
    assert resumed.run_id == started.run_id and resumed.parameters == {"per_topic": 3}
    again = decide(
        "topic-modeling",
        DecisionStore(ArtifactStore(second_machine), resumed.run_id),
        None,
        TopicDecision(),
        "keep all",
    )
    assert (again.reviewer, again.decision) == ("ana", {"excluded_topic_ids": [2]})

    RunStates(second_machine).finish(resumed)
    fresh = RunStates(first_machine).start(inputs)
    assert fresh.run_id != started.run_id and fresh.status == "running"
    assert DecisionStore(ArtifactStore(first_machine), fresh.run_id).get("topic-modeling") is None  # inherits nothing
    other_inputs = RunStates(first_machine).start(fingerprint({"corpus": "edited"}, {"per_topic": 3}))
    assert other_inputs.run_id not in (started.run_id, fresh.run_id)
