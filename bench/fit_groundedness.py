"""Fit the learned groundedness model and write ``assay/data/groundedness/model.json``.

Training data: every row of the BEGIN and Q² sets in bench/data/validity/, WiCE's training claims and the dev
split of the independent set (bench/groundedness_sets.py); WiCE's held-out claims, the independent set's heldout
split and FaithBench are never used here. Each set weighs the
same and, within a set, each label weighs the same, so the largest set does not impose its labelling
conventions. The weights are constrained to be non-negative (L-BFGS-B), with a light L2 penalty.

Also prints the leave-one-dataset-out table: for each training set, the model fitted on the others, measured
on it, beside the best one-line baseline.

The signals of every training row are written beside the data (bench/data/groundedness_signals.jsonl), so that
the fit itself can be checked in seconds: computing them embeds about 70,000 sentences (five minutes on two cores).

Run from the repo root: .venv/bin/python bench/fit_groundedness.py [--check [--sample N]]
  --check       compute every signal again, fit again, and exit 1 when the result differs from the packaged file.
  --sample N    with --check: fit from the recorded signals and compute again only N rows of each training set
                (chosen by a hash of their ids), exiting 1 when any recorded signal or the fit differs.
"""

import argparse
import os
import sys
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import hashlib  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402
from assay.evaluators._groundedness_model import (  # noqa: E402
    FEATURES,
    LEXICAL_FEATURES,
    MODEL_SCHEMA_VERSION,
    GroundednessModel,
    groundedness_score,
)
from scipy.optimize import minimize  # noqa: E402

from assay.validity.metrics import roc_auc  # noqa: E402
from bench.groundedness_sets import TRAINING_SETS, Row, add_signals, bench_services, load_rows  # noqa: E402

MODEL_FILE = ROOT / "assay" / "data" / "groundedness" / "model.json"
SIGNALS_FILE = ROOT / "bench" / "data" / "groundedness_signals.jsonl"
SIGNAL_DECIMALS = 6
L2 = 1.0
MODEL_VERSION = "learned-v2"


def matrix(rows: list[Row], features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([[row.signals[name] for name in features] for row in rows]), np.array([row.label for row in rows])


def fit(rows: list[Row], features: tuple[str, ...] = FEATURES) -> dict:
    """Non-negative logistic regression on standardised signals, sets and labels weighted equally."""
    x, y = matrix(rows, features)
    counts = Counter((row.set, row.label) for row in rows)
    weight = np.array([1 / counts[(row.set, row.label)] for row in rows])
    weight /= weight.sum()
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-12
    z = (x - mean) / scale
    width = z.shape[1]

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        coef, intercept = params[:width], params[width]
        logit = z @ coef + intercept
        log_loss = y * np.logaddexp(0, -logit) + (1 - y) * np.logaddexp(0, logit)
        value = weight @ log_loss + L2 * coef @ coef / (2 * len(y))
        residual = weight * (1 / (1 + np.exp(-logit)) - y)
        return value, np.append(z.T @ residual + L2 * coef / len(y), residual.sum())

    bounds = [(0.0, None)] * width + [(None, None)]
    result = minimize(loss, np.zeros(width + 1), jac=True, method="L-BFGS-B", bounds=bounds)
    return {
        "features": list(features),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "weights": [round(float(v), 6) for v in result.x[:width]],
        "intercept": round(float(result.x[width]), 6),
    }


def model_of(params: dict) -> GroundednessModel:
    return GroundednessModel.from_document({"schema_version": MODEL_SCHEMA_VERSION, "version": "fit", **params}, "fit")


def scores_of(params: dict, rows: list[Row]) -> list[float]:
    """What the evaluator would score with these parameters (the figure cap included)."""
    model = model_of(params)
    return [groundedness_score(model, row.signals, row.figure_at_fault) for row in rows]


def chosen_threshold(params: dict, rows: list[Row]) -> tuple[float, dict[str, dict[str, float]]]:
    """The default threshold: the cut that maximises the mean balanced accuracy over the training sets (each set
    weighs the same, as in the fit), on the grid 0.05..0.95; and each set's expected pass rates at that cut."""
    scores = np.array(scores_of(params, rows))
    labels = np.array([row.label for row in rows])
    sets = sorted({row.set for row in rows})
    member = {name: np.array([row.set == name for row in rows]) for name in sets}

    def rates(cut: float, name: str) -> tuple[float, float]:
        inside = member[name]
        return (float(np.mean(scores[inside & (labels == 1)] >= cut)),
                float(np.mean(scores[inside & (labels == 0)] < cut)))  # fmt: skip

    grid = [round(value, 2) for value in np.arange(0.05, 0.951, 0.01)]
    best = max(grid, key=lambda cut: np.mean([sum(rates(cut, name)) / 2 for name in sets]))
    expected = {
        name: {"supported_pass": round(passed, 4), "unsupported_fail": round(failed, 4)}
        for name in sets
        for passed, failed in [rates(best, name)]
    }
    return best, expected


def leave_one_dataset_out(
    rows: list[Row], held_out: list[Row] = (), features: tuple[str, ...] = FEATURES
) -> dict[str, float]:
    """Per training set, the AUC of a model fitted on the other training sets; ``held_out`` rows (sets never
    trained on) are scored by the model fitted on every training set."""
    rows = [row for row in rows if row.signals is not None]
    held_out = [row for row in held_out if row.signals is not None]
    out = {}
    for held in TRAINING_SETS:
        params = fit([row for row in rows if row.set != held], features)
        test = [row for row in rows if row.set == held]
        out[held] = round(roc_auc(np.array([r.label for r in test]), np.array(scores_of(params, test))), 4)
    if held_out:
        params = fit(rows, features)
        for name in sorted({row.set for row in held_out}):
            test = [row for row in held_out if row.set == name]
            out[name] = round(roc_auc(np.array([r.label for r in test]), np.array(scores_of(params, test))), 4)
    return out


def write_signals(rows: list[Row]) -> None:
    """One line per training row: its id, set, label and the signals the fit weighs (null where unscored)."""
    lines = []
    for row in rows:
        signals = None if row.signals is None else {k: round(v, SIGNAL_DECIMALS) for k, v in row.signals.items()}
        item = {"id": row.id, "set": row.set, "label": row.label, "signals": signals,
                "figure_at_fault": row.figure_at_fault}  # fmt: skip
        lines.append(json.dumps(item, sort_keys=True))
    SIGNALS_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")


def recorded_signals(rows: list[Row]) -> list[str]:
    """Give each row its recorded signals; the problems found (a row missing or its label changed)."""
    recorded = {}
    for line in SIGNALS_FILE.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        recorded[(item["set"], item["id"])] = item
    problems = []
    for row in rows:
        item = recorded.pop((row.set, row.id), None)
        if item is None or item["label"] != row.label:
            problems.append(f"{row.set}/{row.id}: {'not recorded' if item is None else 'label differs'}")
            continue
        row.signals, row.figure_at_fault = item["signals"], item["figure_at_fault"]
    problems += [f"{name}/{key}: recorded but not in the data" for name, key in recorded]
    return problems


def sample_of(rows: list[Row], per_set: int) -> list[Row]:
    """``per_set`` rows of each set, the same ones on every run: those whose id hashes lowest."""

    def rank(row: Row) -> str:
        return hashlib.sha256(f"{row.set}/{row.id}".encode()).hexdigest()

    return [row for name in TRAINING_SETS for row in sorted((r for r in rows if r.set == name), key=rank)[:per_set]]


def signal_differences(recorded: list[Row], computed: list[Row]) -> list[str]:
    problems = []
    for old, new in zip(recorded, computed, strict=True):
        if (old.signals is None) != (new.signals is None) or old.figure_at_fault != new.figure_at_fault:
            problems.append(f"{old.set}/{old.id}: scored or figure verdict differs")
        elif old.signals is not None:
            for name, value in new.signals.items():
                if abs(old.signals.get(name, float("nan")) - value) > 10 ** -(SIGNAL_DECIMALS - 1):
                    problems.append(f"{old.set}/{old.id}: {name} recorded {old.signals.get(name)}, computed {value}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the fit differs from the packaged file")
    parser.add_argument(
        "--with-entailment",
        action="store_true",
        help="fit with the entailment signals too (not shipped: measured no better out of set)",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="N",
        help="with --check: fit from the recorded signals, computing N rows of each set again",
    )
    args = parser.parse_args()
    if args.sample and (not args.check or args.with_entailment):
        parser.error("--sample goes with --check, without --with-entailment")
    features = FEATURES if args.with_entailment else LEXICAL_FEATURES
    other = LEXICAL_FEATURES
    rows = [row for row in load_rows() if row.set in TRAINING_SETS]
    if args.sample:
        problems = recorded_signals(rows)
        sample = sample_of(rows, args.sample)
        fresh = [Row(r.id, r.set, r.question, r.context, r.answer, r.label, r.group) for r in sample]
        add_signals(fresh, bench_services())
        problems += signal_differences(sample, fresh)
        print(f"recorded signals: {len(sample)} rows computed again, {len(problems)} differences")
        for problem in problems[:20]:
            print(f"  {problem}")
        if problems:
            return 1
    else:
        add_signals(rows, bench_services(), with_entailment=args.with_entailment)
        if not args.with_entailment and not args.check:
            write_signals(rows)
    rows = [row for row in rows if row.signals is not None]  # unscored: the answer makes no claim to check
    params = fit(rows, features)
    threshold, expected = chosen_threshold(params, rows)
    document = {
        "schema_version": MODEL_SCHEMA_VERSION,
        "version": MODEL_VERSION,
        **params,
        "threshold": threshold,
        "threshold_rule": "maximises the mean balanced accuracy over the training sets (in-sample)",
        "expected_rates_at_threshold": expected,
        "trained_on": {name: sum(row.set == name for row in rows) for name in TRAINING_SETS},
        "training_command": "python bench/fit_groundedness.py",
        "leave_one_dataset_out_auc": leave_one_dataset_out(rows, features=features),
    }
    print(json.dumps(document, indent=2))
    if args.with_entailment:
        compared = leave_one_dataset_out(rows, features=other)
        print("LODO AUC of the fit without the entailment signals, beside this one:")
        for name, auc in compared.items():
            print(f"  {name:<24}{auc:.4f}  (this fit {document['leave_one_dataset_out_auc'][name]:.4f})")
    if args.check:
        packaged = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
        keys = ("mean", "scale", "weights", "intercept", "threshold")
        same = all(np.allclose(packaged[k], document[k], atol=1e-4) for k in keys)
        print("packaged model reproduced" if same else f"DIFFERS from {MODEL_FILE}")
        return 0 if same else 1
    document["fitted_on"] = date.today().isoformat()
    MODEL_FILE.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {MODEL_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
