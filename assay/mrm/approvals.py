"""Reviewer decisions of the MRM workflow, from a person (Prefect UI form or an approvals file) or a policy.

Decisions are stored in ``<out>/decisions/<step>.json`` as they are made, so a rerun after a crash reuses
them instead of asking the reviewer again.
"""

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from assay.models.base import DomainModel
from assay.models.mrm import Decision

STEPS = ("topic-modeling", "test-validation", "calibration", "failure-clustering")


class TopicDecision(DomainModel):
    excluded_topic_ids: list[int] = Field(default_factory=list)


class CaseDecision(DomainModel):
    excluded_case_keys: list[str] = Field(default_factory=list)


class CalibrationDecision(DomainModel):
    """Item ids (``ReviewItem.item_id``) the reviewer passes and fails; items not listed stay unlabelled."""

    passed_item_ids: list[str] = Field(default_factory=list)
    failed_item_ids: list[str] = Field(default_factory=list)


class WeaknessDecision(DomainModel):
    names: dict[str, str] = Field(default_factory=dict, description="cluster id -> weakness name")


DECISION_MODELS: dict[str, type[DomainModel]] = {
    "topic-modeling": TopicDecision,
    "test-validation": CaseDecision,
    "calibration": CalibrationDecision,
    "failure-clustering": WeaknessDecision,
}


class ApprovalsFile(DomainModel):
    """What a reviewer wrote in advance, per step; steps left out are decided by policy."""

    topic_modeling: TopicDecision | None = Field(default=None, alias="topic-modeling")
    test_validation: CaseDecision | None = Field(default=None, alias="test-validation")
    calibration: CalibrationDecision | None = None
    failure_clustering: WeaknessDecision | None = Field(default=None, alias="failure-clustering")

    def for_step(self, step: str) -> DomainModel | None:
        return getattr(self, step.replace("-", "_"))


def load_approvals(path: Path) -> ApprovalsFile:
    from assay.formats.errors import load_json

    try:
        return ApprovalsFile.model_validate(load_json(path))
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" for item in error.errors())
        raise ValueError(f"{path}: {problems} (steps: {', '.join(STEPS)})") from None


class DecisionStore:
    """Decisions already taken in this run, kept in the run's output folder."""

    def __init__(self, out_dir: Path) -> None:
        self.folder = out_dir / "decisions"

    def get(self, step: str) -> Decision | None:
        path = self.folder / f"{step}.json"
        return Decision.model_validate_json(path.read_text(encoding="utf-8")) if path.exists() else None

    def put(self, decision: Decision) -> Decision:
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{decision.step}.json").write_text(decision.model_dump_json(indent=2), encoding="utf-8")
        return decision

    def all(self) -> list[Decision]:
        return [decision for step in STEPS if (decision := self.get(step)) is not None]


def decide(
    step: str,
    store: DecisionStore,
    approvals: ApprovalsFile | None,
    policy: DomainModel,
    note: str,
) -> Decision:
    """A stored decision if any, else the approvals file's (a person's), else the policy's."""
    stored = store.get(step)
    if stored is not None:
        return stored
    given = approvals.for_step(step) if approvals is not None else None
    if given is not None:
        return store.put(
            Decision(step=step, decided_by="person", decision=given.model_dump(), note="from the approvals file")
        )
    return store.put(Decision(step=step, decided_by="policy", decision=policy.model_dump(), note=note))


def record_person(store: DecisionStore, step: str, decision: dict[str, Any], reviewer: str = "") -> Decision:
    note = f"in the Prefect UI{f' by {reviewer}' if reviewer else ''}"
    return store.put(Decision(step=step, decided_by="person", decision=decision, note=note, reviewer=reviewer))


