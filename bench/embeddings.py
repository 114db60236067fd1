"""Embedding engine vs a plain ``SentenceTransformer.encode`` of the same list.

5,000 texts with 30% duplicates. Prints texts/s for: plain encode, the engine with a cold cache (dedup +
batching), and the engine with a warm on-disk cache in a fresh process-like state (memo cleared). Goals:
cold >= plain (ratio >= 1.0), warm >= 10x plain.
"""

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assay.embeddings import EmbeddingCache, EmbeddingEngine
from assay.embeddings.engine import load_sentence_transformer

SUBJECTS = [
    "The savings account",
    "Our mortgage offer",
    "The credit card",
    "A personal loan",
    "The travel policy",
]
VERBS = ["pays", "charges", "requires", "offers", "limits"]
OBJECTS = [
    "interest monthly",
    "a fee of £{n}",
    "{n} days notice",
    "cover up to £{n},000",
    "withdrawals to {n} a year",
]


def make_texts(count: int, duplicate_share: float, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    unique_count = int(count * (1 - duplicate_share))
    unique = []
    for index in range(unique_count):
        template = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (ref {index})."
        unique.append(template.format(n=rng.randint(1, 999)))
    texts = unique + [rng.choice(unique) for _ in range(count - unique_count)]
    rng.shuffle(texts)
    return texts


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=5000)
    parser.add_argument("--duplicates", type=float, default=0.30)
    args = parser.parse_args()
    texts = make_texts(args.texts, args.duplicates)
    model = load_sentence_transformer("all-MiniLM-L6-v2")
    model.encode(texts[:64], batch_size=64)  # warm-up: first-call overhead belongs to neither side

    started = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    plain = rate(len(texts), time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as folder:
        cache_path = Path(folder) / "embeddings.sqlite3"
        engine = EmbeddingEngine(cache=EmbeddingCache(cache_path), loader=lambda _: model)
        started = time.perf_counter()
        engine.embed(texts)
        cold = rate(len(texts), time.perf_counter() - started)

        warm_engine = EmbeddingEngine(cache=EmbeddingCache(cache_path), loader=lambda _: model)
        started = time.perf_counter()
        warm_engine.embed(texts)
        warm = rate(len(texts), time.perf_counter() - started)
        assert warm_engine.encoded_count == 0, "warm run should not call the model"

    print(f"texts: {len(texts)} ({args.duplicates:.0%} duplicates, {len(set(texts))} distinct)")
    print(f"plain SentenceTransformer.encode : {plain:10.0f} texts/s")
    print(
        f"engine, cold cache               : {cold:10.0f} texts/s   ratio {cold / plain:6.2f}x (goal >= 1.0x)"
    )
    print(
        f"engine, warm cache (new process) : {warm:10.0f} texts/s   ratio {warm / plain:6.2f}x (goal >= 10x)"
    )


if __name__ == "__main__":
    main()
