"""The shipped vectors of the sample corpus cover it, equal what the packaged model computes, and are used only
for the exact texts and model they were computed for."""

import numpy as np
import pytest

from assay.embeddings import EmbeddingEngine
from assay.embeddings.cache import text_key
from assay.embeddings.seed import SEED_FILE, seed_vectors
from assay.hosts.sample_seed import seed_texts

REWRITE = "write it again: python -m assay.hosts.sample_seed"


def test_the_shipped_vectors_cover_the_sample_corpus_exactly(engine: EmbeddingEngine) -> None:
    shipped = seed_vectors(engine.model_id)
    assert shipped, f"{SEED_FILE} holds no vectors for {engine.model_id}; {REWRITE}"
    expected = {text_key(engine.model_id, text) for text in seed_texts()}
    assert set(shipped) == expected, f"{SEED_FILE} is stale for the sample corpus; {REWRITE}"


def test_the_shipped_vectors_are_what_the_model_computes(engine: EmbeddingEngine) -> None:
    texts = seed_texts()
    sample = [texts[i] for i in np.linspace(0, len(texts) - 1, 8).astype(int)]
    fresh = engine.compute(sample)
    shipped = seed_vectors(engine.model_id)
    for text, vector in zip(sample, fresh, strict=True):
        assert np.abs(shipped[text_key(engine.model_id, text)] - vector).max() < 1e-5, text[:60]


class Unloadable(RuntimeError):
    pass


def _no_model(name: str) -> object:
    raise Unloadable(name)


def test_a_shipped_vector_serves_only_its_own_text_and_model(engine: EmbeddingEngine) -> None:
    seeded = seed_texts()[0]
    offline = EmbeddingEngine(engine.model, loader=_no_model, backend=engine.backend)
    assert offline.model_id == engine.model_id
    assert offline.embed([seeded]).shape == (1, 384) and offline.encoded_count == 0  # the model never loaded
    with pytest.raises(Unloadable):
        offline.embed([seeded + " "])  # one character more: not shipped, so the model is needed
    assert seed_vectors(f"{engine.model}@v1+onnx") == {}  # another backend's vectors differ slightly: not used
