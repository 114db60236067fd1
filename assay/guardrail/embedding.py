"""The guardrail's embedder: the shared embedding engine with a bounded memo and no disk cache.

A validation run keeps every vector and writes them to disk; a service that sees an endless stream of live
answers must not (memory would grow without end, and customers' answers would be persisted). The engine's
``memo_limit`` keeps the least-recently-used texts only, which still serves the common case cheaply: the same
retrieved chunks come back request after request, so only the new answer's sentences reach the model.

New texts are encoded one batch at a time, each batch first asking the check's time budget (``budget.spend``),
so a request with thousands of new sentences is stopped within one batch of its deadline.
"""

from collections.abc import Callable
from pathlib import Path

from assay.budget import spend
from assay.embeddings.backends import OnnxEncoder, onnx_model_file
from assay.embeddings.engine import EmbeddingEngine, Encoder, resolve_model_path

DEFAULT_CAPACITY = 50_000
"""Sentences kept (384 floats each: about 77 MB at capacity for MiniLM)."""
BUDGET_BATCH = 16
"""Sentences per model call: small enough that a call outlives the deadline by tens of milliseconds."""


class BoundedEmbedder(EmbeddingEngine):
    """An ``EmbeddingEngine`` that never touches the disk cache, forgets the least recently used texts and
    stops between batches when the check's time budget is spent."""

    def __init__(
        self,
        model: str,
        *,
        capacity: int = DEFAULT_CAPACITY,
        loader: Callable[[str], Encoder] | None = None,
        backend: str = "torch",
        export_dir: Path | None = None,
        threads: int | None = None,
    ) -> None:
        """``export_dir`` holds only an ONNX backend's converted model, never any text or vector; ``threads``
        sets the model's intra-op threads (torch's are process-wide: this process is the service)."""
        if loader is None and threads is not None and backend != "torch" and export_dir is not None:
            loader = _onnx_loader(backend, export_dir, threads)
        super().__init__(
            model, cache=None, batch_size=BUDGET_BATCH, memo_limit=capacity, loader=loader, backend=backend,
            export_dir=export_dir,
        )  # fmt: skip
        self.capacity = capacity
        self.threads = threads

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = self._loader(self.model)
            if self.threads is not None and self.backend == "torch":
                import torch

                torch.set_num_threads(self.threads)
        return self._encoder

    def _fill_memo(self, distinct: dict[str, str]) -> None:
        missing = [key for key in distinct if key not in self._memo]
        for start in range(0, len(missing), self.batch_size):
            spend()
            super()._fill_memo({key: distinct[key] for key in missing[start : start + self.batch_size]})


def _onnx_loader(backend: str, export_dir: Path, threads: int) -> Callable[[str], Encoder]:
    def load(model: str) -> Encoder:
        path = resolve_model_path(model)
        return OnnxEncoder(onnx_model_file(path, export_dir, backend), path, threads=threads)

    return load
