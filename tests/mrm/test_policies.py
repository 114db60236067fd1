"""What a reviewed step decides without a person (``assay.mrm.policies``): the same proposals a form starts
from, each with the note that says a policy decided."""

from assay.models.mrm import CaseValidation, FailureCluster, FailureClusters, SuiteValidation
from assay.mrm.policies import calibration_policy, case_policy, cluster_policy, proposed_name, topic_policy


def _cluster(cluster_id: int, keywords: list[str]) -> FailureCluster:
    return FailureCluster(id=cluster_id, size=2, row_keys=["m:a", "m:b"], keywords=keywords)


def test_the_case_policy_excludes_exactly_the_flagged_outliers() -> None:
    validation = SuiteValidation(
        cases=[
            CaseValidation(test_case_key="a", cosine=0.9),
            CaseValidation(test_case_key="b", cosine=0.1, outlier=True, reasons=["far from its source"]),
        ],
        nli_status="available",
    )
    policy = case_policy(validation)
    assert policy.decision.model_dump() == {"excluded_case_keys": ["b"]}
    assert policy.note == "policy: exclude the flagged outliers"


def test_no_policy_invents_a_label_or_drops_a_topic() -> None:
    assert topic_policy().decision.model_dump() == {"excluded_topic_ids": []}
    calibration = calibration_policy()
    assert calibration.decision.model_dump() == {"passed_item_ids": [], "failed_item_ids": [], "not_meaningful": []}
    assert calibration.note.startswith("no reviewer")


def test_clusters_are_named_by_three_keywords_on_one_visible_line() -> None:
    clusters = FailureClusters(
        clusters=[_cluster(0, ["fees", "overdraft\nlimit", "card", "atm"]), _cluster(1, [])], failures=4
    )
    names = cluster_policy(clusters).decision.model_dump()["names"]
    assert names == {"0": "fees, overdraft limit, card", "1": "cluster 1"}
    long = proposed_name(_cluster(2, ["x" * 60, "y" * 60]))
    assert len(long) == 80 and long.endswith("…")
    assert "\\x1b" in proposed_name(_cluster(3, ["esc\x1b[31m"]))  # a control character is shown, not obeyed
