import json
from pathlib import Path

import pytest

from assay.mrm.approvals import CaseDecision, DecisionStore, TopicDecision, decide, load_approvals, record_person


def test_file_decisions_are_a_persons_and_policy_fills_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text(json.dumps({"topic-modeling": {"excluded_topic_ids": [2, 5]}}))
    approvals = load_approvals(path)
    store = DecisionStore(tmp_path / "out")
    topics = decide("topic-modeling", store, approvals, TopicDecision(), "policy: keep all")
    cases = decide("test-validation", store, approvals, CaseDecision(excluded_case_keys=["x"]), "policy: outliers")
    assert (topics.decided_by, topics.decision) == ("person", {"excluded_topic_ids": [2, 5]})
    assert (cases.decided_by, cases.decision, cases.note) == (
        "policy",
        {"excluded_case_keys": ["x"]},
        "policy: outliers",
    )
    assert [d.step for d in store.all()] == ["topic-modeling", "test-validation"]


def test_a_stored_decision_is_reused_on_rerun(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    record_person(store, "test-validation", {"excluded_case_keys": ["a"]}, reviewer="ana")
    again = decide("test-validation", store, None, CaseDecision(excluded_case_keys=["b"]), "policy")
    assert again.decided_by == "person" and again.decision == {"excluded_case_keys": ["a"]}
    assert again.note == "in the Prefect UI by ana"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"topic-modeling": {"excluded_topic_ids": ["x"]}}', "topic-modeling.excluded_topic_ids.0"),
        ('{"unknown-step": {}}', "unknown-step"),
        ('{"calibration": ', "line 1 column"),
    ],
)
def test_bad_approvals_name_the_file_and_field(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "approvals.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"approvals\.json") as error:
        load_approvals(path)
    assert fragment in str(error.value)
