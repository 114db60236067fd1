"""The guardrail's embedder: the project's sentence model behind a bounded in-memory memo.

The run-time ``EmbeddingEngine`` keeps every text it ever embedded and writes them to an on-disk cache: right
for a validation run, wrong for a service that sees an endless stream of live answers (memory grows without
end, and customers' answers would be persisted). Here the memo is a least-recently-used map of fixed size,
which still serves the common case cheaply: the same retrieved chunks come back request after request, so
their sentences are embedded once and only the new answer's sentences reach the model, in one encode call.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from assay.embeddings.engine import Encoder, load_sentence_transformer

DEFAULT_CAPACITY = 50_000
"""Sentences kept (384 floats each: about 77 MB at capacity for MiniLM)."""


class BoundedEmbedder:
    """Unit vectors for texts, each distinct text encoded once while it stays among the recently used."""

    def __init__(
        self,
        model: str,
        *,
        capacity: int = DEFAULT_CAPACITY,
        loader: Callable[[str], Encoder] = load_sentence_transformer,
    ) -> None:
        self.model = model
        self.capacity = capacity
        self._loader = loader
        self._encoder: Encoder | None = None
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.encoded_count = 0

    def load(self) -> None:
        """Load the model now (readiness), rather than on the first live request."""
        with self._lock:
            self._encoder_loaded()

    def _encoder_loaded(self) -> Encoder:
        if self._encoder is None:
            self._encoder = self._loader(self.model)
        return self._encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per input text, in input order; the texts not in the memo go to the model in one call."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            missing = [text for text in dict.fromkeys(texts) if text not in self._memo]
            if missing:
                vectors = (
                    self._encoder_loaded()
                    .encode(
                        missing,
                        batch_size=64,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                    .astype(np.float32)
                )
                self.encoded_count += len(missing)
                self._memo.update(zip(missing, vectors, strict=True))
            rows = []
            for text in texts:
                self._memo.move_to_end(text)
                rows.append(self._memo[text])
            while len(self._memo) > self.capacity:
                self._memo.popitem(last=False)
            return np.stack(rows)
