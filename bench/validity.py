"""Validity of ``groundedness`` against human labels, beside the one-line baselines of the same run.

Sets (bench/groundedness_sets.py): four public sets labelled by people who never saw Assay (BEGIN dev: WoW,
Topical-Chat, CMU-DoG; Q² on WoW; sources and licences in bench/data/validity/README.md) and the independent
set written for the last validity work (its dev split is training data, its heldout split is never fitted).

Printed, per set, with 95% bootstrap intervals (and per generator or answer kind: n, AUC, verdicts agreeing
with the label at the default threshold): the packaged ``groundedness`` (whose model was fitted on the
public sets and the independent dev split, so those figures are in-sample), the rule-based ``hybrid`` it
replaced as the default, and every baseline. Then the leave-one-dataset-out table: for each training set the
model fitted on the other sets, measured on it (the out-of-set figure the targets are checked on), and the
heldout split scored by the model fitted on every training set. Writes ``assay/data/validity/measured.json``
(the published figures reports and guardrails.json quote) unless ``--no-write``.

Targets (issue 23): on every set at least the best baseline, on average at least 0.02 above it; mean 0.95 over
the three BEGIN sets; 0.80 on Q². Exit status 1 when a target is missed.

Run from the repo root: .venv/bin/python bench/validity.py [--no-write]
"""

import argparse
import os
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json  # noqa: E402

import numpy as np  # noqa: E402
from assay.evaluators import Services, build_evaluator  # noqa: E402

from assay.embeddings import shared_engine  # noqa: E402
from assay.validity.baselines import BASELINES, score_baselines  # noqa: E402
from assay.validity.metrics import Interval, auc_interval, scored_pairs  # noqa: E402
from bench.fit_groundedness import leave_one_dataset_out  # noqa: E402
from bench.groundedness_sets import (  # noqa: E402
    INDEPENDENT_HELDOUT,
    PUBLIC_SETS,
    TRAINING_SETS,
    Row,
    add_signals,
    load_rows,
)

MEASURED_FILE = ROOT / "assay" / "data" / "validity" / "measured.json"
SETS = (*TRAINING_SETS, INDEPENDENT_HELDOUT)
BEGIN_SETS = PUBLIC_SETS[:3]
PROJECT_LICENCE = "Apache-2.0 (this project)"
SOURCES = {
    "begin_dev_wow": ("BEGIN benchmark dev split, Wizard of Wikipedia (Dziri et al. 2022)", "CC BY 4.0"),
    "begin_dev_topicalchat": ("BEGIN benchmark dev split, Topical-Chat (Dziri et al. 2022)", "CDLA-Sharing 1.0"),
    "begin_dev_cmudog": ("BEGIN benchmark dev split, CMU-DoG (Dziri et al. 2022)", "CMU-DoG licence (BSD-style)"),
    "q2_wow": ("Q² consistency annotations on Wizard of Wikipedia (Honovich et al. 2021)", "MIT"),
    "independent_dev": ("Assay independent groundedness set, dev split (bench/data)", PROJECT_LICENCE),
    "independent_heldout": ("Assay independent groundedness set, heldout split (bench/data)", PROJECT_LICENCE),
}


def figure(rows: list[Row], values: list[float | None], higher_is_better: bool = True) -> Interval:
    labels, scores, _ = scored_pairs([row.label for row in rows], values)
    return auc_interval(labels, scores, higher_is_better)


def show(interval: Interval) -> str:
    return f"{interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def print_groups(rows: list[Row], threshold: float) -> None:
    """Per generator (public sets) or answer kind (independent set): n, AUC where both labels occur, and the
    share of rows whose verdict at the threshold agrees with the label, so a weak kind is not hidden."""
    groups = sorted({row.group for row in rows})
    cells = []
    for group in groups:
        members = [row for row in rows if row.group == group]
        agree = sum((row.groundedness >= threshold) == bool(row.label) for row in members) / len(members)
        auc = figure(members, [row.groundedness for row in members]).estimate
        cells.append(f"{group} n={len(members)} AUC={'-' if auc is None else f'{auc:.3f}'} agree={agree:.0%}")
    for start in range(0, len(cells), 3):
        print("    " + "; ".join(cells[start : start + 3]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="do not rewrite assay/data/validity/measured.json")
    args = parser.parse_args()
    rows = load_rows()
    services = Services(embedder_factory=shared_engine)
    add_signals(rows, services)
    threshold = build_evaluator("groundedness").threshold("groundedness")
    baselines = score_baselines([r.answer for r in rows], [r.context for r in rows], lambda: services.embedder)
    published: list[dict] = []
    best_gaps: dict[str, float] = {}
    print("ROC-AUC [95% bootstrap interval], per set; groundedness = the packaged evaluator")
    for name in SETS:
        members = [i for i, row in enumerate(rows) if row.set == name]
        subset = [rows[i] for i in members]
        ours = figure(subset, [row.groundedness for row in subset])
        before = figure(subset, [row.signals["hybrid"] for row in subset])
        base = {
            key: figure(subset, [baselines.values[key][i] for i in members], BASELINES[key].higher_is_better)
            for key in baselines.values
        }
        best = max(base, key=lambda key: base[key].estimate)
        best_gaps[name] = ours.estimate - base[best].estimate
        in_training = "in training" if name in TRAINING_SETS else "never trained on"
        print(f"\n{name} (n={len(subset)}, {sum(r.label for r in subset)} supported; {in_training})")
        print(f"  {'groundedness (learned)':<48}{show(ours)}")
        print(f"  {'hybrid (the default before)':<48}{show(before)}")
        for key, interval in base.items():
            marker = "  <- best" if key == best else ""
            print(f"  {'baseline: ' + BASELINES[key].display_name:<48}{show(interval)}{marker}")
        print_groups(subset, threshold)
        source, licence = SOURCES[name]
        published.append({
            "set": name, "source": source, "licence": licence,
            "split": "training (in-sample)" if name in TRAINING_SETS else "held-out",
            "n": len(subset), "auc": ours.estimate, "auc_low": ours.low, "auc_high": ours.high,
            "best_baseline": best, "best_baseline_auc": base[best].estimate,
        })  # fmt: skip
    training = [row for row in rows if row.set in TRAINING_SETS]
    lodo = leave_one_dataset_out(training, [row for row in rows if row.set not in TRAINING_SETS])
    print("\nLeave one dataset out: the model fitted without the set, measured on it (heldout: fitted on all)")
    print(f"  {'set':<24}{'LODO AUC':>10}{'best baseline':>15}{'gap':>8}")
    gaps = []
    for entry in published:
        gap = lodo[entry["set"]] - entry["best_baseline_auc"]
        gaps.append(gap)
        entry["leave_one_dataset_out_auc"] = lodo[entry["set"]]
        print(f"  {entry['set']:<24}{lodo[entry['set']]:>10.3f}{entry['best_baseline_auc']:>15.3f}{gap:>+8.3f}")
    begin_mean = float(np.mean([lodo[name] for name in BEGIN_SETS]))
    checks = {
        "every set at least the best baseline (LODO)": min(gaps) >= 0,
        "mean gap over the sets at least +0.02 (LODO)": float(np.mean(gaps)) >= 0.02,
        "mean over the three BEGIN sets at least 0.95 (LODO)": begin_mean >= 0.95,
        "Q² at least 0.80 (LODO)": lodo["q2_wow"] >= 0.80,
    }
    summary = f"mean gap {np.mean(gaps):+.3f}; worst {min(gaps):+.3f}; BEGIN mean {begin_mean:.3f}"
    print(f"\n{summary}; Q² {lodo['q2_wow']:.3f}")
    for line, met in checks.items():
        print(f"  {'PASS' if met else 'MISS'}  {line}")
    if not args.no_write:
        document = {
            "schema_version": 1, "measured_by": "bench/validity.py", "measured_on": date.today().isoformat(),
            "evaluators": {"groundedness": {"groundedness": published}},
        }  # fmt: skip
        MEASURED_FILE.parent.mkdir(parents=True, exist_ok=True)
        MEASURED_FILE.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nwrote {MEASURED_FILE.relative_to(ROOT)}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
