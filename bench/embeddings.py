"""Embedding engine vs a plain ``SentenceTransformer.encode`` of the same list.

5,000 texts with 30% duplicates. Prints texts/s for: plain encode, the engine with a cold cache (dedup +
batching), and the engine with a warm on-disk cache in a fresh process-like state (memo cleared). Goals:
cold >= plain (ratio >= 1.0), warm >= 10x plain.

``--cache-vectors N`` (no model needed) compares the compact cache with the former one-row-per-vector layout
(rebuilt here as the baseline): file size / raw vector bytes (goal <= 1.2x) and a warm lookup of N keys.
"""

import argparse
import os
import random
import sqlite3
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

from assay.embeddings import CACHE_FILE_NAME, EmbeddingCache, EmbeddingEngine
from assay.embeddings.cache import text_key
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


def _row_per_vector_cache(path: Path, items: list[tuple[str, np.ndarray]]) -> sqlite3.Connection:
    """The layout before issue 12: one WITHOUT ROWID row per vector (one overflow page each)."""
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE embeddings (key TEXT PRIMARY KEY, dim INTEGER, vector BLOB) WITHOUT ROWID")
    for start in range(0, len(items), 500):
        with connection:
            connection.executemany(
                "INSERT INTO embeddings VALUES (?, ?, ?)",
                [(key, 384, vector.tobytes()) for key, vector in items[start : start + 500]],
            )
    return connection


def _row_per_vector_lookup(connection: sqlite3.Connection, keys: list[str]) -> int:
    found = 0
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = connection.execute(
            f"SELECT key, vector FROM embeddings WHERE key IN ({','.join('?' * len(chunk))})", chunk
        )
        found += sum(1 for _, blob in rows if np.frombuffer(blob, dtype=np.float32).size)
    return found


def _size(folder: Path, name: str) -> int:
    return sum(path.stat().st_size for path in folder.iterdir() if path.name.startswith(name))


def cache_report(count: int) -> None:
    rng = np.random.default_rng(3)
    items = [(text_key("bench@v1", f"text {i}"), rng.standard_normal(384).astype(np.float32)) for i in range(count)]
    keys = [key for key, _ in items]
    raw = count * 384 * 4
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        old = _row_per_vector_cache(root / "old.sqlite3", items)
        old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        compact = EmbeddingCache(root / "new.sqlite3")
        for start in range(0, count, 500):  # the engine writes once per encode call: batches of new texts
            compact.put_many(items[start : start + 500])
        compact._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        started = time.perf_counter()
        assert _row_per_vector_lookup(old, keys) == count
        old_lookup = time.perf_counter() - started
        fresh = EmbeddingCache(root / "new.sqlite3")
        started = time.perf_counter()
        assert len(fresh.get_many(keys)) == count
        new_lookup = time.perf_counter() - started
        print(f"cache, {count} vectors of 384 float32 ({raw / 1e6:.1f} MB raw), written in batches of 500")
        print(f"row-per-vector (before) : file {_size(root, 'old.sqlite3') / raw:5.2f}x raw")
        print(f"compact batches (now)   : file {_size(root, 'new.sqlite3') / raw:5.2f}x raw (goal <= 1.2x)")
        print(
            f"warm lookup of {count} keys: before {old_lookup * 1000:.0f} ms, now {new_lookup * 1000:.0f} ms"
            f" (ratio now/before {new_lookup / old_lookup:.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=5000)
    parser.add_argument("--duplicates", type=float, default=0.30)
    parser.add_argument("--cache-vectors", type=int, default=0, help="only the cache size/lookup comparison")
    args = parser.parse_args()
    if args.cache_vectors:
        cache_report(args.cache_vectors)
        return
    texts = make_texts(args.texts, args.duplicates)
    model = load_sentence_transformer("all-MiniLM-L6-v2")
    model.encode(texts[:64], batch_size=64)  # warm-up: first-call overhead belongs to neither side

    started = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    plain = rate(len(texts), time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as folder:
        cache_path = Path(folder) / CACHE_FILE_NAME
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
    print(f"engine, cold cache               : {cold:10.0f} texts/s   ratio {cold / plain:6.2f}x (goal >= 1.0x)")
    print(f"engine, warm cache (new process) : {warm:10.0f} texts/s   ratio {warm / plain:6.2f}x (goal >= 10x)")


if __name__ == "__main__":
    main()
