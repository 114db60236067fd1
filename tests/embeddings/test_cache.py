"""The compact embedding cache: round trip, size close to the raw vectors, and two processes writing at once."""

import multiprocessing
import sqlite3
import zlib
from pathlib import Path

import numpy as np

from assay.embeddings import EmbeddingCache
from assay.embeddings.cache import text_key


def _vectors(prefix: str, count: int, dim: int = 384) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(prefix.encode()))
    return {text_key("m@v1", f"{prefix}{i}"): rng.standard_normal(dim).astype(np.float32) for i in range(count)}


def test_round_trip_across_batches_and_partial_reads(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite3")
    first, second = _vectors("a", 300), _vectors("b", 5)
    cache.put_many(first.items())
    cache.put_many(second.items())
    cache.put_many(list(first.items())[:10])  # already stored: nothing appended
    assert len(cache) == 305
    few = [next(iter(first)), *list(second)[:2], "00" * 32]  # a few rows of a big batch go through blob reads
    found = EmbeddingCache(tmp_path / "c.sqlite3").get_many(few)
    assert set(found) == set(few[:3])
    assert np.array_equal(found[few[0]], first[few[0]])
    everything = cache.get_many(list(first) + list(second))
    assert all(np.array_equal(everything[k], v) for k, v in {**first, **second}.items())


def test_file_stays_within_1_2x_the_raw_vector_bytes(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    cache = EmbeddingCache(path)
    vectors = _vectors("s", 2000)
    items = list(vectors.items())
    for start in range(0, len(items), 500):
        cache.put_many(items[start : start + 500])
    cache.close()
    raw = 2000 * 384 * 4
    on_disk = sum(p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith("c.sqlite3"))
    assert on_disk <= 1.2 * raw, f"{on_disk / raw:.2f}x the raw vectors"


def _writer(path: str, prefix: str, barrier: "multiprocessing.synchronize.Barrier") -> None:
    cache = EmbeddingCache(Path(path))
    shared, own = _vectors("shared", 200), _vectors(prefix, 200)
    barrier.wait()
    for start in range(0, 200, 20):
        cache.put_many(list(own.items())[start : start + 20] + list(shared.items())[start : start + 20])


def test_two_processes_writing_at_once_lose_and_tear_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_writer, args=(str(path), name, barrier)) for name in ("p", "q")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    expected = {**_vectors("shared", 200), **_vectors("p", 200), **_vectors("q", 200)}
    cache = EmbeddingCache(path)
    assert len(cache) == 600
    found = cache.get_many(list(expected))
    assert all(np.array_equal(found[k], v) for k, v in expected.items())


def _opener(path: str, barrier: "multiprocessing.synchronize.Barrier", results: "multiprocessing.Queue[str]") -> None:
    barrier.wait()
    try:
        EmbeddingCache(Path(path)).close()
        results.put("ok")
    except sqlite3.OperationalError as error:
        results.put(str(error))


def test_processes_opening_a_fresh_cache_at_once_wait_for_each_other(tmp_path: Path) -> None:
    """Switching a fresh file to WAL while another process does the same answered "database is locked" at once
    (13 of 400 opens, four processes at a time): each open now waits its turn. 30 rounds of four catch the old
    behaviour about 97 times in 100."""
    context = multiprocessing.get_context("fork")  # the children share this module's imports: no start-up cost
    outcomes = []
    for round_number in range(30):
        path = tmp_path / f"round-{round_number}.sqlite3"
        barrier, results = context.Barrier(4), context.Queue()
        openers = [context.Process(target=_opener, args=(str(path), barrier, results)) for _ in range(4)]
        for opener in openers:
            opener.start()
        outcomes += [results.get(timeout=60) for _ in openers]
        for opener in openers:
            opener.join(60)
    assert [outcome for outcome in outcomes if outcome != "ok"] == []
