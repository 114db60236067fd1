"""The figures reported for Assay's entailment model: SNLI test accuracy and per-set ROC-AUC of P(entailment).

Every figure is measured through ``NliBackend``, the path evaluators use: an answer's score is the minimum over
its sentences of the maximum over context windows of P(entailment). WiCE is scored on the held-out 20% of
claims only (``is_heldout_claim``), per row and per claim (best chunk, as the WiCE authors score). FaithBench,
BEGIN and Q² are evaluation only: read here, never trained or tuned on.
"""

from pathlib import Path

import numpy as np
from _entailment_pairs import LABELS, Pair, is_heldout_claim, read_jsonl
from assay.evaluators._nli import NliBackend
from sklearn.metrics import roc_auc_score

from assay.embeddings.sentences import split_sentences

EVALUATION_SETS = ("begin_dev_wow", "begin_dev_topicalchat", "begin_dev_cmudog", "q2_wow", "faithbench_dev")


def snli_accuracy(backend: NliBackend, pairs: list[Pair]) -> float:
    """Share of pairs whose most probable label (neutral = what entailment and contradiction leave) is right."""
    scores = backend.score_pairs([(pair.premise, pair.hypothesis) for pair in pairs])
    rows = [[s.entailment, 1 - s.entailment - (s.contradiction or 0), s.contradiction or 0] for s in scores]
    predicted = [LABELS[int(np.argmax(row))] for row in rows]
    return float(np.mean([guess == pair.label for guess, pair in zip(predicted, pairs, strict=True)]))


def answer_scores(backend: NliBackend, rows: list[dict]) -> list[float]:
    """Min over answer sentences of the max over context windows of P(entailment), one per row."""
    items = [(split_sentences(row["answer"]) or [row["answer"]], [row["context"]]) for row in rows]
    return [min(sentence.entailment for sentence in support) for support in backend.support_many(items)]


def wice_figures(backend: NliBackend, folder: Path) -> dict[str, float]:
    rows = [row for row in read_jsonl(folder / "wice_dev.jsonl") if is_heldout_claim(row["claim_id"])]
    scores = answer_scores(backend, rows)
    best: dict[str, tuple[int, float]] = {}
    for row, score in zip(rows, scores, strict=True):
        best[row["claim_id"]] = (row["label"], max(score, best.get(row["claim_id"], (0, 0.0))[1]))
    claims = list(best.values())
    return {
        "wice_heldout_rows": len(rows),
        "wice_heldout_auc": round(float(roc_auc_score([row["label"] for row in rows], scores)), 4),
        "wice_heldout_claims": len(claims),
        "wice_heldout_claim_auc": round(float(roc_auc_score([c[0] for c in claims], [c[1] for c in claims])), 4),
    }


def validity_figures(backend: NliBackend, folder: Path) -> dict[str, float]:
    figures = wice_figures(backend, folder)
    for name in EVALUATION_SETS:
        rows = read_jsonl(folder / f"{name}.jsonl")
        scores = answer_scores(backend, rows)
        figures[f"{name}_auc"] = round(float(roc_auc_score([row["label"] for row in rows], scores)), 4)
        print(f"  {name}: AUC {figures[f'{name}_auc']} ({len(rows)} rows)", flush=True)
    return figures
