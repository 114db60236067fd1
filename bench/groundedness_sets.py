"""The human-labelled groundedness sets the learned model is fitted and measured on, and their signals.

- Five public sets labelled by people who never saw Assay (copied with their licences into
  ``bench/data/validity/``, see its README): BEGIN (three), Q² and WiCE (oracle retrieval version). WiCE's
  claims are split by a salted hash of the claim id (bench/_entailment_pairs.py): about 80% (``wice_train``) may
  be fitted on, by the learned model and by the entailment model; the rest (``wice_heldout``) never is.
- The independent set written for earlier validity work (``bench/data/groundedness_independent.jsonl``, frozen
  by its hash): its ``dev`` split is training data, its ``heldout`` split is never fitted on.
- FaithBench (``faithbench_dev``): evaluation only (CC BY-NC-SA). It is never copied into this repository and
  never fitted on: it is read from the team's shared folder (``$ASSAY_SHARED_VALIDITY``, default
  ``../shared/validity`` beside the checkout) and left out, with a note, where that folder is absent."""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from assay.evaluators import CaseContext, Services, build_evaluator
from assay.evaluators._assay_entailment import packaged_entailment_backend
from assay.evaluators._claim_entailment import claim_entailments, entailment_pairs, entailment_signals
from assay.evaluators._claims import sentences
from assay.evaluators.base import Unscored
from assay.evaluators.groundedness import claim_signals, evidence_texts

from bench._entailment_pairs import is_heldout_claim
from bench.labelled_sets import load_labelled_set, verify_frozen

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_DIR = ROOT / "bench" / "data" / "validity"
INDEPENDENT_SET = ROOT / "bench" / "data" / "groundedness_independent.jsonl"
SHARED_DIR = Path(os.environ.get("ASSAY_SHARED_VALIDITY", ROOT.parent / "shared" / "validity"))
PUBLIC_SETS = ("begin_dev_cmudog", "begin_dev_topicalchat", "begin_dev_wow", "q2_wow")
WICE_TRAIN, WICE_HELDOUT = "wice_train", "wice_heldout"
INDEPENDENT_DEV, INDEPENDENT_HELDOUT = "independent_dev", "independent_heldout"
EVALUATION_ONLY = ("faithbench_dev",)
TRAINING_SETS = (*PUBLIC_SETS, WICE_TRAIN, INDEPENDENT_DEV)
HELDOUT_SETS = (WICE_HELDOUT, INDEPENDENT_HELDOUT, *EVALUATION_ONLY)


@dataclass
class Row:
    id: str
    set: str
    question: str
    context: list[str]
    answer: str
    label: int
    group: str  # the generator of the answer (public sets) or the answer kind (independent set)
    signals: dict[str, float] | None = None
    figure_at_fault: bool = False
    groundedness: float | None = None  # the packaged evaluator's score
    claim_scores: list[float] | None = None  # the packaged evaluator's score of each claim


def load_rows() -> list[Row]:
    rows = []
    for name in PUBLIC_SETS:
        for line in (PUBLIC_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            context = item["context"] if isinstance(item["context"], list) else [item["context"]]
            label, group = int(item["label"]), item.get("generator", "")
            rows.append(Row(item["id"], name, item["question"], context, item["answer"], label, group))
    for line in (PUBLIC_DIR / "wice_dev.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        name = WICE_HELDOUT if is_heldout_claim(item["claim_id"]) else WICE_TRAIN
        rows.append(Row(item["id"], name, "", [item["context"]], item["answer"], int(item["label"]),
                        item["source_label"]))  # fmt: skip
    for name in EVALUATION_ONLY:
        rows += _evaluation_only(name)
    verify_frozen(INDEPENDENT_SET)
    for item in load_labelled_set(INDEPENDENT_SET):
        name = INDEPENDENT_DEV if item.split == "dev" else INDEPENDENT_HELDOUT
        label = int(item.label == "supported")
        rows.append(Row(item.id, name, item.question, item.context, item.answer, label, item.kind))
    return rows


def _evaluation_only(name: str) -> list[Row]:
    """A set that may be measured but never fitted on nor copied here, read from the shared folder."""
    path = SHARED_DIR / f"{name}.jsonl"
    if not path.is_file():
        print(f"note: {name} left out: {path} is absent (set ASSAY_SHARED_VALIDITY to the shared validity folder)")
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        rows.append(Row(item["id"], name, item["question"], [item["context"]], item["answer"], int(item["label"]),
                        item["source_label"]))  # fmt: skip
    return rows


def bench_services() -> Services:
    """Services whose embeddings persist under .assay/cache/bench: a refit or a validity run after a change reads
    the vectors of every unchanged text instead of embedding ~3,000 contexts again."""
    from assay.embeddings import shared_engine

    return Services(embedder_factory=lambda: shared_engine(cache_dir=ROOT / ".assay" / "cache" / "bench"))


def cases(rows: list[Row]) -> list[CaseContext]:
    return [
        CaseContext.build(test_case_key=row.id, question=row.question, retrieved_context=row.context,
                          actual_output=row.answer)
        for row in rows
    ]


def add_signals(rows: list[Row], services: Services, *, with_entailment: bool = False) -> None:
    """Each row's score from the packaged evaluator, and the signals a model is fitted on: those of the claim
    with the least rule-based support (the claim an unsupported answer is most likely wrong in), chosen without
    the packaged model so that a refit reproduces itself, with the entailment signals of that claim."""
    evaluator = build_evaluator("groundedness", services)
    contexts = [evaluator.in_scope(case) for case in cases(rows)]
    evaluator.prepare(contexts)
    chosen: list[tuple[Row, str, list[str]]] = []
    for row, case in zip(rows, contexts, strict=True):
        try:
            scored = evaluator.score(case)
            row.groundedness = scored.scores["groundedness"]
            row.claim_scores = [claim["support"] for claim in scored.details["sentences"]]
            supports = evaluator.explain(case)
        except Unscored:  # nothing to check (an answer of framing or questions only): no score, no signals
            continue
        weakest = min([s for s in supports if s.carries_claim] or supports, key=lambda support: support.support)
        texts = evidence_texts(case)
        row.signals, row.figure_at_fault = claim_signals(weakest, texts)
        chosen.append((row, weakest.sentence, [sentence for text in texts for sentence in sentences(text)]))
    if not with_entailment:  # one entailment-model call per row: only for a fit that weighs those signals
        return
    backend = packaged_entailment_backend(batch_size=32)
    backend.score_pairs([pair for _, claim, context in chosen for pair in entailment_pairs([claim], context)])
    for row, claim, context in chosen:
        row.signals |= entailment_signals(claim_entailments(backend, [claim], context)[0])
