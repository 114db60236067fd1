"""Vectors of the packaged sample corpus, computed once by the packaged model and shipped beside it.

Every process that asks the sample RAG (the demo, a first MRM run, scheduled re-validations of the sample
system, the tests' flows) used to embed the same 129 chunks and their sentences again: about 20 s of CPU each
on two cores, before any answer. The engine reads these vectors like a cache that is never written: a vector
is used only for the exact text and model id it was computed for (the key is the cache's ``text_key``), so a
changed corpus or another model or backend simply embeds as before. ``tests/embeddings/test_seed.py`` checks
the file covers the corpus and matches what the model computes.

Which texts, and the command that writes the file again after the sample corpus or the model changes:
``python -m assay.hosts.sample_seed``.
"""

import functools
from pathlib import Path

import numpy as np

from assay.embeddings.cache import text_key

SEED_FILE = Path(__file__).resolve().parents[1] / "data" / "embeddings" / "sample-corpus.npz"


@functools.cache
def seed_vectors(model_id: str) -> dict[str, np.ndarray]:
    """The shipped vectors by ``text_key``, for the engine whose id is ``model_id``; empty for any other."""
    if not SEED_FILE.is_file():
        return {}
    with np.load(SEED_FILE, allow_pickle=False) as data:
        if str(data["model_id"]) != model_id:
            return {}
        return dict(zip(data["keys"].tolist(), data["vectors"], strict=True))


def write_seed(engine_model_id: str, texts: list[str], vectors: np.ndarray, path: Path = SEED_FILE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = np.array([text_key(engine_model_id, text) for text in texts])
    np.savez_compressed(path, model_id=np.array(engine_model_id), keys=keys, vectors=vectors.astype(np.float32))
