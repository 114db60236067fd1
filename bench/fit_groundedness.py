"""Fit the learned groundedness model and write ``assay/data/groundedness/model.json``.

Training data: every row of the BEGIN and Q² sets in bench/data/validity/, WiCE's training claims and the dev
split of the independent set (bench/groundedness_sets.py); WiCE's held-out claims, the independent set's heldout
split and FaithBench are never used here. Each set weighs the
same and, within a set, each label weighs the same, so the largest set does not impose its labelling
conventions. The weights are constrained to be non-negative (L-BFGS-B), with a light L2 penalty.

Also prints the leave-one-dataset-out table: for each training set, the model fitted on the others, measured
on it, beside the best one-line baseline.

Run from the repo root: .venv/bin/python bench/fit_groundedness.py [--check]
  --check  fit again and exit 1 when the result differs from the packaged file (reproducibility).
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
    return GroundednessModel.from_document(
        {"schema_version": MODEL_SCHEMA_VERSION, "version": "fit", **params}, "fit"
    )


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the fit differs from the packaged file")
    parser.add_argument("--with-entailment", action="store_true",
                        help="fit with the entailment signals too (not shipped: measured no better out of set)")
    args = parser.parse_args()
    features = FEATURES if args.with_entailment else LEXICAL_FEATURES
    other = LEXICAL_FEATURES
    rows = [row for row in load_rows() if row.set in TRAINING_SETS]
    add_signals(rows, bench_services(), with_entailment=args.with_entailment)
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
