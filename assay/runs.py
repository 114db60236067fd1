"""Run identity: which run a command continues.

A run is identified by a fingerprint of its inputs and recorded in ``<out>/run.json``. Running the same
command again after a crash finds that file still marked ``running`` with the same fingerprint and
continues the same run (its checkpoints and cached steps are reused); after a completed run, or with
different inputs, a new run starts.
"""

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from assay.formats.errors import read_text

RUN_FILE = "run.json"


class RunRecord(BaseModel):
    run_id: str
    fingerprint: str
    status: Literal["running", "complete"]
    started_at: datetime
    finished_at: datetime | None = None


def fingerprint(*parts: Any) -> str:
    payload = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(payload).hexdigest()


def start_run(out_dir: Path, inputs_fingerprint: str, run_id: str | None = None) -> RunRecord:
    """Continue the interrupted run of the same inputs in ``out_dir``, else start a new one."""
    path = out_dir / RUN_FILE
    now = datetime.now(UTC)
    if run_id is None and path.exists():
        try:
            previous = RunRecord.model_validate_json(read_text(path))
        except ValueError:
            previous = None
        if previous and previous.status == "running" and previous.fingerprint == inputs_fingerprint:
            return previous
    record = RunRecord(
        run_id=run_id or f"{now:%Y%m%dT%H%M%S}-{inputs_fingerprint[:8]}",
        fingerprint=inputs_fingerprint,
        status="running",
        started_at=now,
    )
    _save(path, record)
    return record


def finish_run(out_dir: Path, record: RunRecord) -> RunRecord:
    done = record.model_copy(update={"status": "complete", "finished_at": datetime.now(UTC)})
    _save(out_dir / RUN_FILE, done)
    return done


def _save(path: Path, record: RunRecord) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(record.model_dump_json(indent=2), encoding="utf-8")
