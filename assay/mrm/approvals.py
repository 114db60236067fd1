"""Reviewer decisions of the MRM workflow, from a person (Prefect UI form or an approvals file) or a policy.

Decisions are stored per run as artifacts (``runs/<run id>/decisions/<step>.json``) as they are made, so
resuming the same run after a crash reuses them instead of asking the reviewer again, while a new run asks
again and never inherits another run's decisions. A decision names the reviewer, its source and
when it was taken; before it is accepted it is checked against what the step offered (``check_decision``).
"""

import hashlib
import json
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PrivateAttr, ValidationError, field_validator

from assay.models.artifacts import ArtifactManifest, Producer
from assay.models.base import DomainModel
from assay.models.mrm import Decision, ReviewRecord
from assay.models.steps import DECIDED_STEPS, Step
from assay.names import person_name
from assay.storage.artifacts import ArtifactStore
from assay.storage.errors import ArtifactNotFoundError, ObjectNotFoundError
from assay.storage.run_artifacts import DECISIONS_FLOW, decision_artifact_name
from assay.storage.runs import RUNS_PREFIX, RunDecision, RunStates


def _not_a_boolean(value: object) -> object:
    """JSON's true is 1 to Python: refused, so ``[true]`` never excludes topic 1."""
    if isinstance(value, bool):
        raise ValueError(f"expected a topic id (a whole number), got {str(value).lower()}")
    return value


TopicId = Annotated[int, BeforeValidator(_not_a_boolean)]
Describe = Callable[[dict[str, Any]], list[str]]
"""A step's decision (its decision model's dump) in words, item by item."""


class TopicDecision(DomainModel):
    excluded_topic_ids: list[TopicId] = Field(default_factory=list)


class CaseDecision(DomainModel):
    excluded_case_keys: list[str] = Field(default_factory=list)


class CalibrationDecision(DomainModel):
    """Item ids (``ReviewItem.item_id``) the reviewer passes and fails; items not listed stay unlabelled."""

    passed_item_ids: list[str] = Field(default_factory=list)
    failed_item_ids: list[str] = Field(default_factory=list)
    not_meaningful: list[str] = Field(
        default_factory=list,
        description="Metrics ('<evaluator>/<metric>') the reviewer marked not meaningful for this system: they "
        "keep their default threshold and leave the verdict.",
    )


class WeaknessDecision(DomainModel):
    """A weakness name per failure cluster. A blank name is never a decision: it is refused (the form opens
    again, the approvals file fails naming itself and the field), because stored under a person's name it
    would credit them with a name nobody gave. The form proposes each cluster's keyword name, and a person
    who leaves it as proposed only accepts it: ``kept_proposed`` lists those clusters, so the record says
    the name came from the proposal, not from the person. An approvals file keeps a proposal by leaving the
    cluster out."""

    names: dict[str, str] = Field(default_factory=dict, description="cluster id -> weakness name")
    kept_proposed: list[str] = Field(
        default_factory=list, description="cluster ids whose name is the proposed keyword name, left as proposed"
    )


DECISION_MODELS: dict[str, type[DomainModel]] = {
    Step.TOPIC_MODELING: TopicDecision,
    Step.TEST_VALIDATION: CaseDecision,
    Step.CALIBRATION: CalibrationDecision,
    Step.FAILURE_CLUSTERING: WeaknessDecision,
}


class ApprovalsFile(DomainModel):
    """What a reviewer wrote in advance, per step; steps left out are decided by policy. ``reviewer`` names
    the person who wrote it (their decisions and labels are credited to them)."""

    reviewer: str = ""

    topic_modeling: TopicDecision | None = Field(default=None, alias=Step.TOPIC_MODELING)
    test_validation: CaseDecision | None = Field(default=None, alias=Step.TEST_VALIDATION)
    calibration: CalibrationDecision | None = Field(default=None, alias=Step.CALIBRATION)
    failure_clustering: WeaknessDecision | None = Field(default=None, alias=Step.FAILURE_CLUSTERING)
    _path: str = PrivateAttr(default="the approvals file")

    @field_validator("reviewer")
    @classmethod
    def _a_name_or_nothing(cls, value: str) -> str:
        """A given name must be one: blank or spaces would credit decisions to nobody. Leaving the field out
        credits them to the file itself ('approvals file <path>')."""
        name = person_name(value)
        if not name:  # only a given field is validated: one left out stays '' (the file is credited)
            raise ValueError(
                "blank, spaces or invisible characters are not a name: give the reviewer's name, or leave the "
                "field out"
            )
        return name

    def for_step(self, step: str) -> DomainModel | None:
        return getattr(self, step.replace("-", "_"))


def load_approvals(path: Path) -> ApprovalsFile:
    from assay.formats.errors import load_json

    try:
        approvals = ApprovalsFile.model_validate(load_json(path))
        approvals._path = str(path)
        return approvals
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" for item in error.errors())
        raise ValueError(f"{path}: {problems} (steps: {', '.join(DECIDED_STEPS)})") from None


class DecisionError(ValueError):
    """A decision that names what the step did not offer (a mistyped case key, an unknown topic id)."""


DECISION_FIELDS = {
    Step.TOPIC_MODELING: ("excluded_topic_ids", "topic id"),
    Step.TEST_VALIDATION: ("excluded_case_keys", "test case key"),
    Step.CALIBRATION: ("passed_item_ids", "review item id"),
    Step.FAILURE_CLUSTERING: ("names", "cluster id"),
}


def check_decision(step: str, decision: Mapping[str, Any], offered: Collection[str]) -> None:
    """Raise ``DecisionError`` naming the field and the unknown values when ``decision`` refers to anything
    the step did not offer (``offered``: the ids, keys or names shown to the reviewer, as strings), or gives
    a cluster a blank name (see ``WeaknessDecision``)."""
    fields = {
        Step.CALIBRATION: ["passed_item_ids", "failed_item_ids", "not_meaningful"],
        Step.FAILURE_CLUSTERING: ["names", "kept_proposed"],
    }
    what = DECISION_FIELDS[step][1]
    known = set(offered)
    for name in fields.get(step, [DECISION_FIELDS[step][0]]):
        values = decision.get(name) or []
        unknown = [str(value) for value in values if str(value) not in known]
        if unknown:
            listed = ", ".join(repr(value) for value in unknown[:5])
            raise DecisionError(f"{name}: unknown {what}(s) {listed}; the step offered {len(known)} ({_sample(known)})")
    if step == Step.CALIBRATION:
        both = set(decision.get("passed_item_ids") or []) & set(decision.get("failed_item_ids") or [])
        if both:
            raise DecisionError(f"passed_item_ids and failed_item_ids both list {sorted(both)[:3]}")
    blank = [str(cluster) for cluster, name in (decision.get("names") or {}).items() if not str(name or "").strip()]
    if blank:
        raise DecisionError(
            f"names: give every cluster a name (cluster {', '.join(blank)} has none); expected a weakness name, "
            "or, to keep the proposed keyword name, leave it as proposed (form) or leave the cluster out (file)"
        )


def _sample(known: Collection[str]) -> str:
    shown = sorted(known)[:5]
    return ", ".join(shown) + (", ..." if len(known) > 5 else "") if shown else "none"


def offered_digest(offered: Collection[str] | None) -> str:
    """What a decision was taken on: the SHA-256 of the sorted ids, keys or names the step offered."""
    if offered is None:
        return ""
    return hashlib.sha256("\n".join(sorted(offered)).encode()).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class DecisionStore:
    """Decisions already taken in one run. Each is a versioned, journaled artifact of the run
    (``runs/<run id>/decisions/<step>.json`` in the artifact store, produced by the run), so compliance lists,
    fetches, verifies and bundles it like any report, and it survives a lost machine on the S3 backend too.
    The run's state (and its ``run.json``) lists each one. Decisions stored before they were artifacts (plain
    objects at the same key under the object store's ``runs/``) are still read, and become artifacts then.
    Pages of a review answered in several forms are kept as they come (``<step>.page-<n>.json`` objects) so a
    crash between two pages does not ask the reviewer again for the pages already answered."""

    def __init__(self, artifacts: ArtifactStore, run_id: str) -> None:
        self.artifacts = artifacts
        self.store = artifacts.store
        self.run_id = run_id
        self.prefix = f"{RUNS_PREFIX}/{run_id}/decisions/"

    def get(self, step: str) -> Decision | None:
        """The step's decision, checked against its manifest and journal entry (a tampered one raises)."""
        try:
            return Decision.model_validate_json(self.artifacts.get(decision_artifact_name(self.run_id, step))[1])
        except ArtifactNotFoundError:
            return self._from_before_artifacts(step)

    def put(self, decision: Decision) -> Decision:
        decision = decision.model_copy(update={"run_id": self.run_id, "decided_at": decision.decided_at or _now()})
        manifest = self.artifacts.put_json(
            decision_artifact_name(self.run_id, decision.step),
            decision.model_dump(mode="json"),
            producer=Producer(flow=DECISIONS_FLOW, run_id=self.run_id),
            metadata={"kind": "decision", "step": decision.step, "source": decision.source},
        )
        RunStates(self.store, self.artifacts.signer).record_decision(self.run_id, decision_entry(decision, manifest))
        return decision

    def all(self) -> list[Decision]:
        return [decision for step in DECIDED_STEPS if (decision := self.get(step)) is not None]

    def save_page(self, step: str, page: int, answer: dict[str, Any]) -> None:
        """Keep one answered page of a paged review until the whole decision is recorded."""
        self.store.put(
            f"{self.prefix}{step}.page-{page}.json",
            json.dumps(answer).encode(),
            content_type="application/json",
            overwrite=True,
        )

    def pages(self, step: str) -> dict[int, dict[str, Any]]:
        """The pages of ``step`` answered so far in this run, by page number."""
        found = {}
        for key in self.store.list(f"{self.prefix}{step}.page-"):
            number = key.rsplit(".page-", 1)[1].removesuffix(".json")
            if number.isdigit():
                found[int(number)] = json.loads(self.store.get(key))
        return found

    def _from_before_artifacts(self, step: str) -> Decision | None:
        """A decision an older Assay stored as a plain object: published as the artifact, and the object
        removed, so the artifact is its one copy from then on."""
        key = f"{self.prefix}{step}.json"
        try:
            decision = Decision.model_validate_json(self.store.get(key))
        except ObjectNotFoundError:
            return None
        published = self.put(decision)
        self.store.delete(key)
        return published


def decision_entry(decision: Decision, manifest: ArtifactManifest) -> RunDecision:
    """What the run's state says of one decision: who took it, when, from where, and its artifact version."""
    return RunDecision(
        step=decision.step,
        decided_by=decision.decided_by,
        reviewer=decision.reviewer,
        source=decision.source,
        decided_at=decision.decided_at,
        artifact=manifest.name,
        version=manifest.version,
        sha256=manifest.sha256,
    )


def decide(
    step: str,
    store: DecisionStore,
    approvals: ApprovalsFile | None,
    policy: DomainModel,
    note: str,
    offered: Collection[str] | None = None,
    describe: Describe | None = None,
) -> Decision:
    """A stored decision of this run if any, else the approvals file's (a person's, checked against
    ``offered`` first: a bad one fails here, naming the file, the step and the field, and is not stored),
    else the policy's. ``describe`` says a new decision in words (``Decision.in_words``)."""
    stored = store.get(step)
    if stored is not None:
        return stored
    given = approvals.for_step(step) if approvals is not None else None
    taken_on = offered_digest(offered)
    if given is not None:
        if offered is not None:
            try:
                check_decision(step, given.model_dump(), offered)
            except DecisionError as error:
                raise DecisionError(f"{approvals._path}, step {step!r}: {error}") from None
        decision = Decision(
            step=step,
            decided_by="person",
            decision=given.model_dump(),
            taken_on=taken_on,
            note=f"from {approvals._path}",
            reviewer=approvals.reviewer,
            source="approvals-file",
            in_words=describe(given.model_dump()) if describe else [],
        )
        return store.put(decision)
    decided = policy.model_dump()
    decision = Decision(
        step=step, decided_by="policy", decision=decided, note=note, source="policy", taken_on=taken_on,
        in_words=describe(decided) if describe else [],
    )  # fmt: skip
    return store.put(decision)


def record_person(
    store: DecisionStore,
    step: str,
    decision: dict[str, Any],
    reviewer: str,
    offered: Collection[str] | None = None,
    review: ReviewRecord | None = None,
    describe: Describe | None = None,
) -> Decision:
    how = f", {review.how}, {len(review.changed)} of {review.shown} shown changed" if review is not None else ""
    note = f"in the Prefect UI by {reviewer}{how}"
    return store.put(
        Decision(
            step=step,
            decided_by="person",
            decision=decision,
            note=note,
            reviewer=reviewer,
            source="prefect-ui",
            taken_on=offered_digest(offered),
            review=review,
            in_words=describe(decision) if describe else [],
        )
    )
