"""The human-labelled groundedness sets the learned model is fitted and measured on, and their signals.

Five sets: four public sets labelled by people who never saw Assay (copied with their licences into
``bench/data/validity/``, see its README) and the independent set written for the last validity work
(``bench/data/groundedness_independent.jsonl``, frozen by its hash), whose ``dev`` split is part of the
training data and whose ``heldout`` split is never fitted on."""

import json
from dataclasses import dataclass
from pathlib import Path

from assay.evaluators import CaseContext, Services, build_evaluator

from bench.labelled_sets import load_labelled_set, verify_frozen

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_DIR = ROOT / "bench" / "data" / "validity"
INDEPENDENT_SET = ROOT / "bench" / "data" / "groundedness_independent.jsonl"
PUBLIC_SETS = ("begin_dev_cmudog", "begin_dev_topicalchat", "begin_dev_wow", "q2_wow")
INDEPENDENT_DEV, INDEPENDENT_HELDOUT = "independent_dev", "independent_heldout"
TRAINING_SETS = (*PUBLIC_SETS, INDEPENDENT_DEV)


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


def load_rows() -> list[Row]:
    rows = []
    for name in PUBLIC_SETS:
        for line in (PUBLIC_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            context = item["context"] if isinstance(item["context"], list) else [item["context"]]
            label, group = int(item["label"]), item.get("generator", "")
            rows.append(Row(item["id"], name, item["question"], context, item["answer"], label, group))
    verify_frozen(INDEPENDENT_SET)
    for item in load_labelled_set(INDEPENDENT_SET):
        name = INDEPENDENT_DEV if item.split == "dev" else INDEPENDENT_HELDOUT
        label = int(item.label == "supported")
        rows.append(Row(item.id, name, item.question, item.context, item.answer, label, item.kind))
    return rows


def cases(rows: list[Row]) -> list[CaseContext]:
    return [
        CaseContext.build(test_case_key=row.id, question=row.question, retrieved_context=row.context,
                          actual_output=row.answer)
        for row in rows
    ]


def add_signals(rows: list[Row], services: Services) -> None:
    """Each row's score from the packaged evaluator and the model signals it read (its details carry them), so
    a refit sees exactly what the evaluator computes."""
    evaluator = build_evaluator("groundedness", services)
    contexts = cases(rows)
    evaluator.prepare(contexts)
    for row, case in zip(rows, contexts, strict=True):
        scored = evaluator.score(case)
        row.groundedness = scored.scores["groundedness"]
        row.signals = scored.details["signals"]
        row.figure_at_fault = bool(scored.details["unsupported_figures"])
