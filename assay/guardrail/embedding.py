"""The guardrail's embedder: the shared embedding engine with a bounded memo and no disk cache.

A validation run keeps every vector and writes them to disk; a service that sees an endless stream of live
answers must not (memory would grow without end, and customers' answers would be persisted). The engine's
``memo_limit`` keeps the least-recently-used texts only, which still serves the common case cheaply: the same
retrieved chunks come back request after request, so only the new answer's sentences reach the model.
"""

from collections.abc import Callable
from pathlib import Path

from assay.embeddings.engine import EmbeddingEngine, Encoder

DEFAULT_CAPACITY = 50_000
"""Sentences kept (384 floats each: about 77 MB at capacity for MiniLM)."""


class BoundedEmbedder(EmbeddingEngine):
    """An ``EmbeddingEngine`` that never touches the disk cache and forgets the least recently used texts."""

    def __init__(
        self,
        model: str,
        *,
        capacity: int = DEFAULT_CAPACITY,
        loader: Callable[[str], Encoder] | None = None,
        backend: str = "torch",
        export_dir: Path | None = None,
    ) -> None:
        """``export_dir`` holds only an ONNX backend's converted model, never any text or vector."""
        super().__init__(model, cache=None, memo_limit=capacity, loader=loader, backend=backend, export_dir=export_dir)
        self.capacity = capacity
