"""Scores streamed to the object store shard by shard while an evaluator runs, so a rerun resumes mid-evaluator.

The evaluate task persists an evaluator's whole result once it finishes; before this, a crash at case 9,000
of 10,000 (or a killed worker, or a judge that stopped answering) lost every score of that evaluator. Here an
evaluator runs over shards of ``SCORE_SHARD_SIZE`` test cases (``evaluators.shards``: exact, every model's
rows of a case stay together); each finished shard's result is written to
``runs/<run_id>/scores/<evaluator>/<shard fingerprint>.json`` as soon as it is scored, and a rerun of the
same run reads the shards it finds instead of scoring them again. The fingerprint covers the evaluator, its
parameters and the shard's rows (questions, answers, contexts), so a shard is never reused for other input.
Checkpoints are signed like the lab's (``assay.storage.checkpoints``); one that fails its check is scored
again. Once the merged result exists the shards are deleted: the task's persisted result holds them all.

An evaluator whose scores depend on the other cases (``unshardable_reason``) runs whole, as do labs of one
shard or less.
"""

import hashlib
import logging

from assay.evaluators.base import Evaluator
from assay.evaluators.runner import run_evaluator
from assay.evaluators.shards import merge_results, shard_lab, unshardable_reason
from pydantic import ValidationError

from assay.models import TestLab
from assay.models.evaluation import EvaluationResult
from assay.progress import Progress, part, report
from assay.storage.base import ObjectStore
from assay.storage.checkpoints import check_checkpoint, parse_checkpoint, put_checkpoint
from assay.storage.runs import fingerprint
from assay.storage.signing import Signer

SCORE_SHARD_SIZE = 500
"""Test cases per checkpoint: large enough to keep batching (embeddings, judge calls) efficient."""
log = logging.getLogger(__name__)


def score_prefix(run_id: str, evaluator_id: str) -> str:
    return f"runs/{run_id}/scores/{evaluator_id}/"


def run_with_checkpoints(
    evaluator: Evaluator,
    lab: TestLab,
    *,
    store: ObjectStore | None,
    run_id: str,
    signer: Signer | None = None,
    shard_size: int = SCORE_SHARD_SIZE,
    progress: Progress | None = None,
) -> EvaluationResult:
    """``run_evaluator(evaluator, lab)``, with each shard's scores checkpointed in ``store`` (see the module).
    ``progress`` hears the fraction of the lab's rows done, a stored shard's at once."""
    if store is None or len(lab.rows) <= shard_size or unshardable_reason(evaluator) is not None:
        return run_evaluator(evaluator, lab, progress)
    configuration = fingerprint(evaluator.spec.id, evaluator.parameters())
    prefix = score_prefix(run_id, evaluator.spec.id)
    header = {"run_id": run_id, "evaluator": evaluator.spec.id}
    parts, keys, done = [], [], 0
    for shard in shard_lab(lab, shard_size):
        content = hashlib.sha256(configuration.encode() + shard.model_dump_json().encode()).hexdigest()
        key = f"{prefix}{content}.json"
        result = _stored_part(store, key, header, signer)
        if result is None:
            shard_progress = part(progress, done / len(lab.rows), (done + len(shard.rows)) / len(lab.rows))
            result = run_evaluator(evaluator, shard, shard_progress)
            document = {**header, "result": result.model_dump(mode="json")}
            put_checkpoint(store, key, document, signer, overwrite=True)  # over a rejected one
        done += len(shard.rows)
        report(progress, done / len(lab.rows))
        parts.append(result)
        keys.append(key)
    merged = merge_results(evaluator, lab, parts)
    for key in keys:
        store.delete(key)
    return merged


def _stored_part(
    store: ObjectStore, key: str, header: dict[str, str], signer: Signer | None
) -> EvaluationResult | None:
    """The shard result an earlier attempt stored at ``key``; None when there is none or it cannot be trusted."""
    if not store.exists(key):
        return None
    try:
        document = check_checkpoint(parse_checkpoint(store.get(key)), header, signer)
        return EvaluationResult.model_validate(document.get("result"))
    except (ValueError, ValidationError) as error:
        log.warning("score checkpoint %s in %s rejected, its cases are scored again: %s", key, store.describe(), error)
        return None
