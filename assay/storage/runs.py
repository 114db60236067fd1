"""Run identity and state: which run a command continues, kept in the object store.

A run's state (``runs/<run id>/state.json``) holds its id, status, parameters and the content fingerprints
of its inputs; decisions and lab checkpoints live beside it under the same prefix. Because the object store
(a folder, or an S3 bucket) owns the state rather than the output folder, a run survives a lost machine
and the output folder is only an export (it gets a copy, ``run.json``).

Running the same inputs again after a crash finds the run still marked ``running`` through the pointer
``runs/by-inputs/<fingerprint>.json`` and continues it (its decisions, checkpoints and cached steps are
reused); after a completed run, or with different inputs, a new run starts and inherits nothing.
"""

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.atomic import write_atomic
from assay.storage.base import ObjectStore
from assay.storage.errors import ObjectNotFoundError
from assay.storage.run_state_check import MAC_FIELD, state_payload
from assay.storage.signing import Signer

RUN_FILE = "run.json"
RUNS_PREFIX = "runs"
_POINTERS = f"{RUNS_PREFIX}/by-inputs"


class RunDecision(BaseModel):
    """One reviewer decision of the run, as its state and ``run.json`` list it; the decision itself is the
    artifact version named here."""

    step: str
    decided_by: str
    reviewer: str = ""
    source: str = ""
    decided_at: str = ""
    artifact: str = Field(description="The decision's artifact name in the artifact store.")
    version: int
    sha256: str


class RunRecord(BaseModel):
    run_id: str
    fingerprint: str
    status: Literal["running", "complete"]
    started_at: datetime
    finished_at: datetime | None = None
    workflow: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="The run's parameters as given (no secrets: hosts name key variables)."
    )
    fingerprints: dict[str, str] = Field(
        default_factory=dict, description="SHA-256 of each input's content (corpus files, suite, hosts...)."
    )
    export: str = Field(default="", description="The folder the run's files were exported to.")
    decisions: list[RunDecision] = Field(default_factory=list, description="Its reviewer decisions, by step.")
    mac: str | None = Field(
        default=None, description="HMAC of the rest, with the store's signing key: edits show in 'artifacts verify'."
    )


def fingerprint(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(payload).hexdigest()


def folder_fingerprint(folder: Path) -> str:
    """SHA-256 over the relative path and bytes of every file under ``folder`` (sorted), so renaming the
    folder keeps the fingerprint and editing any document changes it."""
    digest = hashlib.sha256()
    for path in sorted(item for item in folder.rglob("*") if item.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


RUN_ID_PLACEHOLDER = "{run_id}"


def export_folder(out: str | None, run_id: str, home: Path) -> Path:
    """Where a run's files are exported: ``out`` with ``{run_id}`` filled in (a deployment's folder template,
    so each scheduled run gets its own folder), else ``<home>/exports/<run id>``."""
    return Path(out.replace(RUN_ID_PLACEHOLDER, run_id)) if out else home / "exports" / run_id


def pointer_key(inputs_fingerprint: str) -> str:
    """Where the run of these inputs is found (``runs/by-inputs/<fingerprint>.json``), signed like a state."""
    return f"{_POINTERS}/{inputs_fingerprint}.json"


def state_key(run_id: str) -> str:
    return f"{RUNS_PREFIX}/{run_id}/state.json"


class RunStates:
    """Start, find and finish runs in an object store; with a ``Signer`` each state written is signed."""

    def __init__(self, store: ObjectStore, signer: Signer | None = None) -> None:
        self.store = store
        self.signer = signer

    def get(self, run_id: str) -> RunRecord | None:
        try:
            return RunRecord.model_validate_json(self.store.get(state_key(run_id)))
        except ObjectNotFoundError:
            return None

    def start(
        self,
        inputs_fingerprint: str,
        run_id: str | None = None,
        *,
        workflow: str = "",
        parameters: dict[str, Any] | None = None,
        fingerprints: dict[str, str] | None = None,
        export: str = "",
    ) -> RunRecord:
        """Continue the unfinished run of the same inputs (or the named ``run_id``), else start a new one."""
        previous = self.get(run_id) if run_id else self._unfinished(inputs_fingerprint)
        if previous is not None and previous.status == "running":
            return self._save(previous.model_copy(update={"export": export or previous.export}))
        now = datetime.now(UTC)
        record = RunRecord(
            run_id=run_id or self._new_id(f"{now:%Y%m%dT%H%M%S}-{inputs_fingerprint[:8]}"),
            fingerprint=inputs_fingerprint,
            status="running",
            started_at=now,
            workflow=workflow,
            parameters=parameters or {},
            fingerprints=fingerprints or {},
            export=export,
        )
        pointer: dict[str, Any] = {"run_id": record.run_id, "fingerprint": inputs_fingerprint}
        if self.signer is not None:
            pointer[MAC_FIELD] = self.signer.sign(state_payload(pointer))
        self.store.put(pointer_key(inputs_fingerprint), json.dumps(pointer).encode(), content_type="application/json",
                       overwrite=True)  # fmt: skip
        return self._save(record)

    def _new_id(self, base: str) -> str:
        """A run id no run has used: two runs of the same inputs in the same second get distinct ids, so the
        later one can never read the earlier one's decisions."""
        candidate, number = base, 1
        while self.get(candidate) is not None:
            number += 1
            candidate = f"{base}-{number}"
        return candidate

    def exported_to(self, record: RunRecord, folder: str) -> RunRecord:
        """Record where the run's files are exported (known once the run id is, when it names the folder)."""
        return self._save(record.model_copy(update={"export": folder, "decisions": self._decisions(record)}))

    def finish(self, record: RunRecord) -> RunRecord:
        update = {"status": "complete", "finished_at": datetime.now(UTC), "decisions": self._decisions(record)}
        return self._save(record.model_copy(update=update))

    def record_decision(self, run_id: str, decision: RunDecision) -> None:
        """List a decision in the run's state (replacing an earlier one of its step); no state, nothing to do."""
        record = self.get(run_id)
        if record is None:
            return
        kept = [entry for entry in record.decisions if entry.step != decision.step]
        self._save(record.model_copy(update={"decisions": [*kept, decision]}))

    def _decisions(self, record: RunRecord) -> list[RunDecision]:
        """The decisions stored for the run: a caller's copy of its record predates those taken since."""
        stored = self.get(record.run_id)
        return stored.decisions if stored is not None else record.decisions

    def _unfinished(self, inputs_fingerprint: str) -> RunRecord | None:
        """The running run of these inputs, through its pointer; a pointer the signing key does not vouch for
        (edited, or written without the key) is not followed: a new run starts instead."""
        try:
            pointer = json.loads(self.store.get(pointer_key(inputs_fingerprint)))
        except (ObjectNotFoundError, ValueError):
            return None
        if not isinstance(pointer, dict):
            return None
        if self.signer is not None and self.signer.check(state_payload(pointer), pointer.get(MAC_FIELD)) is False:
            return None
        record = self.get(str(pointer.get("run_id", "")))
        return record if record is not None and record.fingerprint == inputs_fingerprint else None

    def _save(self, record: RunRecord) -> RunRecord:
        mac = self.signer.sign(state_payload(record.model_dump(mode="json"))) if self.signer is not None else None
        record = record.model_copy(update={"mac": mac})
        data = record.model_dump_json(indent=2).encode()
        self.store.put(state_key(record.run_id), data, content_type="application/json", overwrite=True)
        if record.export:
            write_atomic(Path(record.export) / RUN_FILE, data)
        return record


class StepTimings:
    """Seconds each workflow step's library code computed for, per attempt of a run, kept in the object store
    (``runs/<run id>/timings/<attempt>.json``). The total over attempts is what the step cost: an attempt that
    served a step from the cache adds nothing, so a resumed run still shows the time the step took when it
    was computed. Kept here rather than read back from Prefect's task-run tags, because every tagged task run
    takes and releases a Prefect concurrency slot (two API calls each)."""

    def __init__(self, store: ObjectStore, run_id: str) -> None:
        self.store = store
        self.prefix = f"{RUNS_PREFIX}/{run_id}/timings/"

    def record(self, attempt: str, seconds: dict[str, float]) -> None:
        """This attempt's seconds per step so far (the attempt's file is rewritten each time)."""
        data = json.dumps({step: round(value, 3) for step, value in seconds.items()}).encode()
        self.store.put(f"{self.prefix}{attempt}.json", data, content_type="application/json", overwrite=True)

    def totals(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for key in self.store.list(self.prefix):
            try:
                seconds = json.loads(self.store.get(key))
            except (ObjectNotFoundError, ValueError):
                continue
            for step, value in seconds.items():
                totals[step] = totals.get(step, 0.0) + float(value)
        return totals
