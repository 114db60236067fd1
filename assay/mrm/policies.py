"""What each reviewed step decides when no person does (an unattended run, an approvals file that is silent
on the step, nothing to ask): its policy, and the note that says so in the record.

The same proposals are what a reviewer's form starts from, so a person who accepts them all decides exactly
what the policy would have; the record still says a person decided (``assay.mrm.approvals``)."""

from dataclasses import dataclass

from assay.escaping import short_line, visible_controls
from assay.models.base import DomainModel
from assay.models.mrm import FailureCluster, FailureClusters, SuiteValidation
from assay.mrm.approvals import CalibrationDecision, CaseDecision, TopicDecision, WeaknessDecision

NAME_LIMIT = 80


@dataclass(frozen=True)
class Policy:
    decision: DomainModel
    note: str


def topic_policy() -> Policy:
    return Policy(TopicDecision(), "policy: keep every topic")


def case_policy(validation: SuiteValidation) -> Policy:
    outliers = [check.test_case_key for check in validation.cases if check.outlier]
    return Policy(CaseDecision(excluded_case_keys=outliers), "policy: exclude the flagged outliers")


def calibration_policy() -> Policy:
    """No labels: they are never invented, so without a person every threshold keeps its default."""
    return Policy(CalibrationDecision(), "no reviewer: thresholds stay at their defaults")


def cluster_policy(clusters: FailureClusters) -> Policy:
    names = {str(cluster.id): proposed_name(cluster) for cluster in clusters.clusters}
    return Policy(WeaknessDecision(names=names), "policy: name each cluster by its top keywords")


def proposed_name(cluster: FailureCluster) -> str:
    """The keyword name a cluster is proposed under: one line of at most ``NAME_LIMIT`` characters, control
    characters visible, never blank (a cluster without keywords is 'cluster N')."""
    return short_line(visible_controls(", ".join(cluster.keywords[:3])), NAME_LIMIT) or f"cluster {cluster.id}"
