"""The engine's bounded memo (the guardrail's mode), backend selection and the backend in the cache key."""

import builtins
from pathlib import Path

import numpy as np
import pytest

from assay.embeddings import BackendUnavailableError, EmbeddingCache, EmbeddingEngine, shared_engine
from assay.guardrail.embedding import BoundedEmbedder


class Counting:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, sentences: list[str], **kwargs: object) -> np.ndarray:
        self.calls.append(list(sentences))
        return np.array([[len(s), 1.0] for s in sentences], dtype=np.float32)


def test_bounded_memo_forgets_the_least_recently_used_and_writes_nothing(tmp_path: Path) -> None:
    encoder = Counting()
    engine = EmbeddingEngine(loader=lambda _: encoder, memo_limit=3)
    engine.embed(["a", "b", "c"])
    engine.embed(["a"])  # a is now the most recent; b is the oldest
    engine.embed(["d"])  # evicts b
    engine.embed(["a", "c", "d"])
    engine.embed(["b"])
    assert encoder.calls == [["a", "b", "c"], ["d"], ["b"]]
    assert len(engine._memo) == 3
    assert not any(tmp_path.iterdir())


def test_guardrail_embedder_is_the_engine_without_a_disk_cache() -> None:
    encoder = Counting()
    embedder = BoundedEmbedder("fake", capacity=2, loader=lambda _: encoder)
    assert isinstance(embedder, EmbeddingEngine) and embedder.cache is None and embedder.memo_limit == 2
    embedder.load()
    assert embedder.embed(["xx", "y", "xx"]).tolist() == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]


def test_vectors_of_different_backends_never_mix_in_the_cache(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite3")
    EmbeddingEngine(cache=cache, loader=lambda _: Counting(), backend="torch").embed(["x"])
    other = Counting()
    engine = EmbeddingEngine(cache=cache, loader=lambda _: other, backend="onnx-int8")
    engine.embed(["x"])
    assert other.calls == [["x"]] and "onnx-int8" in engine.model_id


def test_unknown_backend_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown embedding backend 'tensorrt'"):
        EmbeddingEngine(backend="tensorrt")


def test_onnx_without_onnxruntime_is_a_clear_error_not_a_fallback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_import = builtins.__import__

    def no_onnxruntime(name: str, *args: object, **kwargs: object) -> object:
        if name == "onnxruntime" or name.startswith("onnxruntime."):
            raise ImportError("No module named 'onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnxruntime)
    with pytest.raises(BackendUnavailableError, match="needs the onnxruntime package"):
        shared_engine(cache_dir=tmp_path, backend="onnx")
    monkeypatch.setenv("ASSAY_EMBEDDING_BACKEND", "onnx-int8")
    with pytest.raises(BackendUnavailableError, match="'onnx-int8'"):
        shared_engine(cache_dir=tmp_path / "other")
