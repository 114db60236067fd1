"""Approved baselines: the run a scheduled re-validation is compared with, and who approved it.

A baseline is approved by a person (``assay baseline approve RUN --name NAME --by PERSON``) and kept in the
object store under ``baselines/<name>.json`` with its history, so every comparison can say which run it was
measured against and on whose authority. A deployment may also pin a run id as a parameter; that is recorded
as such, never as a person's approval."""

import json
import re
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from assay.models.revalidation import FAILED_VERDICTS, BaselineApproval, Verdict
from assay.names import person_name
from assay.storage.base import ObjectStore
from assay.storage.errors import ObjectNotFoundError
from assay.storage.runs import RunRecord, RunStates

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class BaselineBook(BaseModel):
    current: BaselineApproval
    history: list[BaselineApproval] = Field(default_factory=list, description="Earlier approvals, oldest first.")


def baseline_key(name: str) -> str:
    return f"baselines/{name}.json"


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"baseline name {name!r}: use letters, digits, '.', '_' or '-' (at most 100)")
    return name


class Baselines:
    """Approve and look up baselines in an object store (a folder or an S3 bucket)."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def get(self, name: str) -> BaselineApproval | None:
        book = self._book(check_name(name))
        return book.current if book else None

    def history(self, name: str) -> list[BaselineApproval]:
        book = self._book(check_name(name))
        return [*book.history, book.current] if book else []

    def approve(
        self,
        name: str,
        run_id: str,
        approved_by: str,
        note: str = "",
        via: str = "command line",
        *,
        run_verdict: Verdict | None = None,
        failed_run_reason: str = "",
    ) -> BaselineApproval:
        """Only a completed run can become a baseline, and a run whose re-validation failed (``run_verdict``) only
        with the approver's reason; the previous approval moves to the history."""
        who = person_name(approved_by)
        if not who:
            raise ValueError("--by: the approving person's name is required (blank, spaces or invisible characters "
                             "are not a name)")  # fmt: skip
        if run_verdict in FAILED_VERDICTS and not failed_run_reason.strip():
            raise ValueError(f"run {run_id!r}: its re-validation verdict is {run_verdict!r}; approving it as the "
                             "baseline needs the approver's reason")  # fmt: skip
        self.approvable(run_id)
        approval = BaselineApproval(
            name=check_name(name),
            run_id=run_id,
            approved_by=who,
            source="person",
            via=via,
            approved_at=datetime.now(UTC),
            note=note,
            run_verdict=run_verdict,
            failed_run_reason=failed_run_reason.strip(),
        )
        book = self._book(name)
        history = [*book.history, book.current] if book else []
        data = BaselineBook(current=approval, history=history).model_dump_json(indent=2).encode()
        self.store.put(baseline_key(name), data, content_type="application/json", overwrite=True)
        return approval

    def approvable(self, run_id: str) -> RunRecord:
        """The run, if it can become a baseline: known to this store and completed (else a ValueError)."""
        record = RunStates(self.store).get(run_id)
        if record is None:
            raise ValueError(f"run {run_id!r} is unknown to this store (assay artifacts list --run ID shows runs)")
        if record.status != "complete":
            raise ValueError(f"run {run_id!r} is {record.status}: only a completed run can be a baseline")
        return record

    def _book(self, name: str) -> BaselineBook | None:
        try:
            return BaselineBook.model_validate(json.loads(self.store.get(baseline_key(name))))
        except ObjectNotFoundError:
            return None


def pinned(name: str, run_id: str) -> BaselineApproval:
    """A baseline a deployment names as a parameter: said to come from the parameter, not from a person."""
    return BaselineApproval(
        name=check_name(name),
        run_id=run_id,
        approved_by="deployment parameter",
        source="deployment parameter",
        approved_at=datetime.now(UTC),
    )
