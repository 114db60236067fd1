from pathlib import Path

import numpy as np
import pytest

from assay.embeddings import EmbeddingCache, EmbeddingEngine, ModelUnavailableError, resolve_model_path


class CountingEncoder:
    """Deterministic fake: a vector from the text's characters; counts what it was asked to encode."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, sentences: list[str], **kwargs: object) -> np.ndarray:
        self.calls.append(list(sentences))
        vectors = np.array([[len(s), sum(map(ord, s)) % 97, 1.0] for s in sentences], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_each_distinct_text_is_encoded_once_and_order_is_kept() -> None:
    encoder = CountingEncoder()
    engine = EmbeddingEngine(loader=lambda _: encoder)
    vectors = engine.embed(["a", "bb", "a", "ccc", "bb"])
    assert encoder.calls == [["a", "bb", "ccc"]]
    assert np.array_equal(vectors[0], vectors[2]) and np.array_equal(vectors[1], vectors[4])
    engine.embed(["ccc", "dddd"])
    assert encoder.calls[1] == ["dddd"]
    assert engine.encoded_count == 4


def test_disk_cache_serves_a_new_engine_without_the_model(tmp_path: Path) -> None:
    first = CountingEncoder()
    EmbeddingEngine(cache=EmbeddingCache(tmp_path / "e.sqlite3"), loader=lambda _: first).embed(["x", "y"])
    second = CountingEncoder()
    warm = EmbeddingEngine(cache=EmbeddingCache(tmp_path / "e.sqlite3"), loader=lambda _: second)
    vectors = warm.embed(["y", "x", "z"])
    assert second.calls == [["z"]]
    assert vectors.shape == (3, 3)


def test_cache_keys_include_the_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    EmbeddingEngine("model-a", cache=cache, loader=lambda _: CountingEncoder()).embed(["x"])
    other = CountingEncoder()
    EmbeddingEngine("model-b", cache=cache, loader=lambda _: other).embed(["x"])
    assert other.calls == [["x"]]


def test_unknown_model_is_unavailable_not_downloaded(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="never downloads"):
        resolve_model_path("sentence-transformers/some-hub-model")
    assert resolve_model_path(str(tmp_path)) == tmp_path


def test_packaged_model_gives_unit_vectors_and_meaningful_similarity(engine: EmbeddingEngine) -> None:
    vectors = engine.embed(
        ["How do I report a lost card?", "My card was stolen, who do I call?", "Mortgage rates"]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
