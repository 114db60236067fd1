import json
from pathlib import Path

import pytest

from assay.mrm.approvals import (
    CaseDecision,
    DecisionError,
    DecisionStore,
    TopicDecision,
    WeaknessDecision,
    check_decision,
    decide,
    load_approvals,
    record_person,
)
from assay.storage.artifacts import ArtifactStore
from assay.storage.local import LocalObjectStore


def test_file_decisions_are_a_persons_and_policy_fills_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text(json.dumps({"topic-modeling": {"excluded_topic_ids": [2, 5]}}))
    approvals = load_approvals(path)
    store = DecisionStore(ArtifactStore(LocalObjectStore(tmp_path / "store")), "run-1")
    topics = decide("topic-modeling", store, approvals, TopicDecision(), "policy: keep all")
    cases = decide("test-validation", store, approvals, CaseDecision(excluded_case_keys=["x"]), "policy: outliers")
    assert (topics.decided_by, topics.decision) == ("person", {"excluded_topic_ids": [2, 5]})
    assert (cases.decided_by, cases.decision, cases.note) == (
        "policy",
        {"excluded_case_keys": ["x"]},
        "policy: outliers",
    )
    assert [d.step for d in store.all()] == ["topic-modeling", "test-validation"]
    assert topics.note == f"from {path}" and topics.source == "approvals-file"
    assert topics.taken_on == ""  # nothing offered was given to this call


def test_decisions_are_artifacts_and_review_pages_live_in_the_object_store_under_the_run(tmp_path: Path) -> None:
    objects = LocalObjectStore(tmp_path / "store")
    store = DecisionStore(ArtifactStore(objects), "run-1")
    decision = decide("topic-modeling", store, None, TopicDecision(), "keep all", offered=["1", "0"])
    other_run = DecisionStore(ArtifactStore(objects), "run-9")
    same_offer = decide("topic-modeling", other_run, None, TopicDecision(), "k", offered=["0", "1"])
    assert decision.taken_on == same_offer.taken_on
    store.save_page("calibration", 2, {"item_1": "pass"})
    store.save_page("calibration", 1, {"item_1": "fail"})
    assert store.pages("calibration") == {1: {"item_1": "fail"}, 2: {"item_1": "pass"}}
    assert DecisionStore(ArtifactStore(objects), "run-2").pages("calibration") == {}
    manifest = ArtifactStore(objects).latest("runs/run-1/decisions/topic-modeling.json")
    assert (manifest.producer.run_id, manifest.metadata["step"]) == ("run-1", "topic-modeling")
    assert objects.list("runs/run-1/decisions/topic-modeling") == []  # one copy: the artifact


def test_a_stored_decision_is_reused_when_the_same_run_resumes_and_never_by_another_run(tmp_path: Path) -> None:
    record_person(
        DecisionStore(ArtifactStore(LocalObjectStore(tmp_path)), "run-1"),
        "test-validation",
        {"excluded_case_keys": ["a"]},
        reviewer="ana",
    )
    policy = CaseDecision(excluded_case_keys=["b"])
    again = decide(
        "test-validation", DecisionStore(ArtifactStore(LocalObjectStore(tmp_path)), "run-1"), None, policy, "p"
    )
    assert again.decided_by == "person" and again.decision == {"excluded_case_keys": ["a"]}
    assert (again.note, again.reviewer, again.source) == ("in the Prefect UI by ana", "ana", "prefect-ui")
    assert again.run_id == "run-1"
    assert again.decided_at.endswith("+00:00")
    other = decide(
        "test-validation", DecisionStore(ArtifactStore(LocalObjectStore(tmp_path)), "run-2"), None, policy, "p"
    )
    assert (other.decided_by, other.decision, other.run_id) == ("policy", {"excluded_case_keys": ["b"]}, "run-2")


def test_a_decision_naming_what_the_step_did_not_offer_is_refused() -> None:
    check_decision("test-validation", {"excluded_case_keys": ["a"]}, ["a", "b"])
    with pytest.raises(DecisionError, match=r"excluded_case_keys: unknown test case key\(s\) 'c'"):
        check_decision("test-validation", {"excluded_case_keys": ["a", "c"]}, ["a", "b"])
    with pytest.raises(DecisionError, match="topic id"):
        check_decision("topic-modeling", {"excluded_topic_ids": [7]}, ["0", "1"])
    with pytest.raises(DecisionError, match="cluster id"):
        check_decision("failure-clustering", {"names": {"9": "fees"}}, ["0"])
    with pytest.raises(DecisionError, match="both list"):
        check_decision("calibration", {"passed_item_ids": ["x"], "failed_item_ids": ["x"]}, ["x"])


def test_a_bad_approvals_file_decision_fails_naming_the_step_and_field_and_is_not_stored(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text(json.dumps({"test-validation": {"excluded_case_keys": ["typo"]}}))
    store = DecisionStore(ArtifactStore(LocalObjectStore(tmp_path / "store")), "run-1")
    with pytest.raises(DecisionError, match=r"approvals\.json, step 'test-validation': excluded_case_keys: unknown"):
        decide("test-validation", store, load_approvals(path), CaseDecision(), "policy", offered=["a", "b"])
    assert store.get("test-validation") is None


def test_a_blank_cluster_name_is_never_a_decision(tmp_path: Path) -> None:
    check_decision("failure-clustering", {"names": {"0": "Card fees"}, "kept_proposed": []}, ["0", "1"])
    for blank in ("", "   ", "\t\n"):
        with pytest.raises(DecisionError, match=r"names: give every cluster a name \(cluster 1 has none\)"):
            check_decision("failure-clustering", {"names": {"0": "Card fees", "1": blank}}, ["0", "1"])
    with pytest.raises(DecisionError, match=r"kept_proposed: unknown cluster id\(s\) '7'"):
        check_decision("failure-clustering", {"names": {}, "kept_proposed": ["7"]}, ["0"])
    path = tmp_path / "approvals.json"
    path.write_text(json.dumps({"reviewer": "ana", "failure-clustering": {"names": {"0": "Card fees", "1": " "}}}))
    store = DecisionStore(ArtifactStore(LocalObjectStore(tmp_path / "store")), "run-1")
    policy = WeaknessDecision(names={"0": "fee, card", "1": "isa"})
    with pytest.raises(DecisionError, match=r"approvals\.json, step 'failure-clustering': names: .*cluster 1 has none"):
        decide("failure-clustering", store, load_approvals(path), policy, "policy", offered=["0", "1"])
    assert store.get("failure-clustering") is None


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"topic-modeling": {"excluded_topic_ids": ["x"]}}', "topic-modeling.excluded_topic_ids.0"),
        ('{"unknown-step": {}}', "unknown-step"),
        ('{"topic-modeling": {"excluded_topic_ids": [true]}}', "got true"),  # JSON true is not topic 1
        ('{"calibration": ', "line 1 column"),
    ],
)
def test_bad_approvals_name_the_file_and_field(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "approvals.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"approvals\.json") as error:
        load_approvals(path)
    assert fragment in str(error.value)
