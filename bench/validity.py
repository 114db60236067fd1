"""Validity of the groundedness evaluator: does its score separate supported from unsupported answers?

Scores every item of bench/data/groundedness_labelled.jsonl (written by bench/make_groundedness_set.py)
with every ``method`` of the evaluator, using the real packaged MiniLM engine, and prints per method the
ROC-AUC (scikit-learn) on all items and on each split, and the accuracy at the default threshold. The
hybrid method's design was chosen on the ``dev`` split, so its ``test`` AUC is the held-out figure. Then
the default method's pass rate per answer kind, and the target line. Exit status 1 when the target fails.

Run: .venv/bin/python bench/validity.py
"""

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assay.embeddings import shared_engine
from evaluators import CaseContext, Services, build_evaluator
from evaluators.groundedness import METHODS

DATA = Path(__file__).parent / "data" / "groundedness_labelled.jsonl"
DEFAULT_METHOD = "hybrid"
TARGET_AUC = 0.85


def load_items(path: Path = DATA) -> list[dict]:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for number, item in enumerate(items, start=1):
        if item.get("label") not in ("supported", "unsupported") or not item.get("context") or not item.get("answer"):
            raise ValueError(f"{path}:{number}: needs label supported/unsupported, a context and an answer")
    return items


def score_items(method: str, items: list[dict], services: Services) -> tuple[list[float], float]:
    evaluator = build_evaluator("groundedness", services, method=method)
    cases = [
        CaseContext.build(
            test_case_key=item["id"],
            question=item["question"],
            retrieved_context=item["context"],
            actual_output=item["answer"],
        )
        for item in items
    ]
    evaluator.prepare(cases)
    scores = [evaluator.score(case).scores["groundedness"] for case in cases]
    return scores, evaluator.threshold("groundedness")


def auc(labels: list[bool], scores: list[float]) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores))


def main() -> int:
    items = load_items()
    labels = [item["label"] == "supported" for item in items]
    splits = {name: [i for i, item in enumerate(items) if item["split"] == name] for name in ("dev", "test")}
    services = Services(embedder_factory=shared_engine)
    supported = sum(labels)
    print(f"{len(items)} items: {supported} supported, {len(items) - supported} unsupported ({DATA.name})")
    print(f"{'method':<16}{'AUC all':>9}{'AUC dev':>9}{'AUC test':>10}{'acc@thr':>9}")
    results: dict[str, tuple[list[float], float]] = {}
    for method in METHODS:
        scores, threshold = score_items(method, items, services)
        results[method] = (scores, threshold)
        by_split = {
            name: auc([labels[i] for i in indexes], [scores[i] for i in indexes]) for name, indexes in splits.items()
        }
        accuracy = sum((score >= threshold) == label for score, label in zip(scores, labels, strict=True)) / len(items)
        print(
            f"{method:<16}{auc(labels, scores):>9.3f}{by_split['dev']:>9.3f}{by_split['test']:>10.3f}{accuracy:>9.3f}"
        )
    scores, threshold = results[DEFAULT_METHOD]
    print(f"\n{DEFAULT_METHOD}: share of answers passing the threshold {threshold} by kind (seed method alongside)")
    for label, kind in sorted({(item["label"], item["kind"]) for item in items}):
        indexes = [i for i, item in enumerate(items) if item["kind"] == kind]
        passing = sum(scores[i] >= threshold for i in indexes) / len(indexes)
        seed = sum(results["semantic"][0][i] >= threshold for i in indexes) / len(indexes)
        print(f"  {label:<12}{kind:<22}{len(indexes):>4}  pass {passing:5.2f}   seed {seed:5.2f}")
    default_auc = auc(labels, scores)
    verdict = "PASS" if default_auc >= TARGET_AUC else "FAIL"
    print(f"\ndefault ({DEFAULT_METHOD}) AUC >= {TARGET_AUC}: {verdict} ({default_auc:.3f})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
