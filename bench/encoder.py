"""The encoder floor: what a plain batched ``SentenceTransformer.encode`` costs, and what lowers it.

On generated RAG-like texts (questions, answers, 100-250-word context chunks), prints texts/s and the ratio to
the plain encode (batch 64) measured in the same run, for: the engine cold; other batch sizes; explicit
length-bucketed calls; torch thread counts; and the ONNX Runtime backends (fp32, dynamic int8) when installed.
For each backend it also prints how far its similarities stray from torch's: max and mean
|cos_backend(answer, chunk) - cos_torch(answer, chunk)| over answer/chunk pairs of the set, and the max
1 - cos(vec_backend, vec_torch). A backend may be the default only if the max deviation is <= 0.01.
"""

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

from assay.embeddings import EmbeddingEngine
from assay.embeddings.engine import load_sentence_transformer

PRODUCTS = ["Easy Saver", "Fixed Bond", "Home Mortgage", "Travel Cover", "Rewards Card", "Personal Loan"]
FACTS = [
    "pays {n}.{m}% AER variable on balances up to £{k},000",
    "charges a fee of £{n} for each transfer made abroad",
    "needs {n} days notice before a withdrawal",
    "covers lost luggage up to £{k},000 per trip",
    "offers cashback of {m}% on supermarket spending",
    "can be repaid early with a charge of {n} months' interest",
]
FILLER = [
    "Customers can manage the account online or in the app at any time.",
    "Terms may change, and we will write to you at least 30 days beforehand.",
    "Interest is calculated daily and paid on the first working day of each month.",
    "Eligibility depends on age, residency and a credit check where applicable.",
    "Complaints are handled within eight weeks and can be referred to the ombudsman.",
]


def _fact(rng: random.Random) -> str:
    fact = rng.choice(FACTS).format(n=rng.randint(1, 99), m=rng.randint(0, 9), k=rng.randint(1, 90))
    return f"The {rng.choice(PRODUCTS)} {fact}"


def make_texts(count: int, seed: int = 11) -> tuple[list[str], list[tuple[int, int]]]:
    """A third each of questions, answers and context chunks; pairs are (answer index, its chunk index)."""
    rng = random.Random(seed)
    texts: list[str] = []
    pairs: list[tuple[int, int]] = []
    for case in range(count // 3):
        fact = _fact(rng)
        words = 0
        chunk_parts = [fact + "."]
        target = rng.randint(100, 250)
        while words < target:
            part = rng.choice(FILLER) if rng.random() < 0.7 else _fact(rng) + "."
            chunk_parts.append(part)
            words += len(part.split())
        texts.append(f"What does the {rng.choice(PRODUCTS)} offer? (case {case})")
        texts.append(f"{fact}, according to the product sheet (case {case}).")
        texts.append(" ".join(chunk_parts))
        pairs.append((len(texts) - 2, len(texts) - 1))
    return texts, pairs


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def deviation(vectors: np.ndarray, reference: np.ndarray, pairs: list[tuple[int, int]]) -> str:
    left, right = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    backend_cos = np.sum(vectors[left] * vectors[right], axis=1)
    torch_cos = np.sum(reference[left] * reference[right], axis=1)
    gap = np.abs(backend_cos - torch_cos)
    self_gap = 1 - np.sum(vectors * reference, axis=1)
    verdict = "may be default" if gap.max() <= 0.01 else "opt-in only"
    return (
        f"pair |dcos| max {gap.max():.5f} mean {gap.mean():.5f}; max 1-cos(vec, torch) {self_gap.max():.5f}"
        f" ({len(pairs)} answer/chunk pairs: {verdict})"
    )


def bench_set(model: Any, count: int, skip_variants: bool) -> None:
    import torch

    default_threads = torch.get_num_threads()
    texts, pairs = make_texts(count)
    print(f"== {len(texts)} texts (questions, answers, 100-250-word chunks); torch threads {default_threads}")
    reference: list[np.ndarray] = []
    floor = timed(lambda: reference.append(model.encode(texts, batch_size=64, normalize_embeddings=True)))
    torch_vectors = reference[0]

    def line(label: str, seconds: float, extra: str = "") -> None:
        print(f"{label:34s} {len(texts) / seconds:8.0f} texts/s   ratio {floor / seconds:5.2f}x {extra}")

    line("plain encode, batch 64 (floor)", floor)
    line("engine, cold (no disk cache)", timed(lambda: EmbeddingEngine(loader=lambda _: model).embed(texts)))
    if not skip_variants:
        for batch in (16, 32, 128):
            line(f"plain encode, batch {batch}", timed(lambda b=batch: model.encode(texts, batch_size=b)))

        def bucketed() -> None:
            by_length = sorted(texts, key=len)
            for start in range(0, len(by_length), 512):
                model.encode(by_length[start : start + 512], batch_size=64)

        line("length-bucketed calls of 512", timed(bucketed))
        for threads in sorted({1, 2, default_threads}):
            torch.set_num_threads(threads)
            line(f"plain encode, {threads} torch thread(s)", timed(lambda: model.encode(texts, batch_size=64)))
        torch.set_num_threads(default_threads)
    with tempfile.TemporaryDirectory() as folder:
        for backend in ("onnx", "onnx-int8"):
            try:
                engine = EmbeddingEngine(backend=backend, export_dir=Path(folder))
                engine.load()
            except Exception as error:  # not installed here: say so and go on with the others
                print(f"{backend:34s} unavailable: {error}")
                continue
            started = time.perf_counter()
            vectors = engine.embed(texts)
            line(f"engine, backend {backend}", time.perf_counter() - started)
            print(f"{'':34s} {deviation(vectors, torch_vectors, pairs)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, nargs="+", default=[2000])
    parser.add_argument("--skip-variants", action="store_true", help="only the floor, the engine and backends")
    args = parser.parse_args()
    model = load_sentence_transformer("all-MiniLM-L6-v2")
    model.encode(["warm up"] * 8)
    for count in args.texts:
        bench_set(model, count, args.skip_variants)


if __name__ == "__main__":
    main()
