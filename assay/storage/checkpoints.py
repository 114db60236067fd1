"""Checkpoint documents: what a run writes to the object store so that a rerun resumes instead of redoing
work (a lab's answers shard by shard, an evaluator's scores shard by shard).

A checkpoint is a JSON object whose header fields (the run, the model or evaluator) say what it belongs to.
With a ``Signer`` it carries an HMAC of its canonical JSON: whoever can write the store cannot slip edited
answers or scores into a resumed run, because a document that fails its check is rejected (the caller logs
and redoes its work, as for a checkpoint never written).
"""

import json
from collections.abc import Mapping
from typing import Any

from assay.storage.base import ObjectStore
from assay.storage.signing import Signer, canonical_json


def put_checkpoint(
    store: ObjectStore, key: str, document: dict[str, Any], signer: Signer | None, *, overwrite: bool = False
) -> None:
    """Write ``document`` (header fields and payload) at ``key``, signed when there is a signer; ``overwrite``
    replaces a checkpoint that was rejected."""
    document = dict(document)
    if signer is not None:
        document["mac"] = signer.sign(canonical_json(document))
    store.put(
        key,
        json.dumps(document, ensure_ascii=False).encode("utf-8"),
        content_type="application/json",
        overwrite=overwrite,
    )


def check_checkpoint(document: dict[str, Any], header: Mapping[str, Any], signer: Signer | None) -> dict[str, Any]:
    """``document`` without its MAC once its header matches and its signature holds; ``ValueError`` saying
    why it cannot be trusted otherwise."""
    document = dict(document)
    mac = document.pop("mac", None)
    found = {field: document.get(field) for field in header}
    if found != dict(header):
        named = (f"{field.removesuffix('_id')} {value!r}" for field, value in found.items())
        raise ValueError("written for " + ", ".join(named))
    if signer is not None and signer.check(canonical_json(document), mac) is False:
        raise ValueError(f"its signature does not match its content (checked with the {signer.describe()})")
    return document


def parse_checkpoint(data: bytes) -> Any:
    """The JSON value of a stored checkpoint; ``ValueError`` when it is not JSON."""
    try:
        return json.loads(data)
    except ValueError as error:
        raise ValueError(f"not JSON: {error}") from error
