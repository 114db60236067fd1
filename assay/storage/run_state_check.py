"""Signed run states: a run's ``state.json``, and the pointer ``runs/by-inputs/<fingerprint>.json`` a rerun of
the same inputs follows to it, carry an HMAC made with the store's signing key, so ``assay artifacts verify``
reports either edited by someone who holds the store but not the key.

The state is rewritten while the run goes on (started, exported, decisions, finished), so it cannot be an
immutable artifact version; each write signs the whole document instead. A state without a MAC (written
before states were signed, or by a writer without a key) cannot be checked, and ``verify`` says so.
"""

import json
import re
from typing import Any

from assay.models.artifacts import VerificationIssue
from assay.storage.base import ObjectStore
from assay.storage.errors import StorageError
from assay.storage.signing import Signer, canonical_json

MAC_FIELD = "mac"
MAX_STATE_BYTES = 4 << 20
# The keys ``assay.storage.runs.state_key`` makes (importing it here would be circular: runs uses this module).
STATE_KEY = re.compile(r"runs/([^/]+)/state\.json")
POINTER_KEY = re.compile(r"runs/by-inputs/([^/]+)\.json")
"""The pointer from an inputs fingerprint to its run (``assay.storage.runs.pointer_key``), signed the same way."""


def state_payload(document: dict[str, Any]) -> bytes:
    """What a state's MAC signs: every field but the MAC itself."""
    return canonical_json({field: value for field, value in document.items() if field != MAC_FIELD})


def check_run_states(
    store: ObjectStore, signer: Signer | None, prefix: str = ""
) -> tuple[list[VerificationIssue], list[str]]:
    """Issues of edited states under ``prefix`` and notes on what could not be checked."""
    issues: list[VerificationIssue] = []
    unsigned: dict[str, list[str]] = {"run states": [], "run pointers (runs/by-inputs)": []}
    for key in store.list("runs/"):
        match = STATE_KEY.fullmatch(key) or POINTER_KEY.fullmatch(key)
        if not match or not key.startswith(prefix):
            continue
        kind = "run states" if STATE_KEY.fullmatch(key) else "run pointers (runs/by-inputs)"
        try:
            document = json.loads(store.get(key, max_bytes=MAX_STATE_BYTES))
        except (StorageError, ValueError) as error:
            issues.append(_issue(key, f"unreadable: {str(error).splitlines()[0]}"))
            continue
        if not isinstance(document, dict):
            issues.append(_issue(key, "not a JSON object"))
        elif not isinstance(document.get(MAC_FIELD), str):
            unsigned[kind].append(match.group(1))
        elif signer is not None and signer.check(state_payload(document), document[MAC_FIELD]) is False:
            issues.append(
                _issue(key, f"its signature does not match its content (checked with the {signer.describe()})")
            )
    notes = []
    for kind, names in unsigned.items():
        if names:
            named = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            notes.append(f"{kind}: {len(names)} carry no signature, so edits to them go unnoticed ({named})")
    return issues, notes


def _issue(key: str, detail: str) -> VerificationIssue:
    return VerificationIssue(name=key, problem="edited_run_state", detail=f"{key}: {detail}")
