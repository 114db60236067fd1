"""Embeddings shared by hosts and evaluators: one engine per process, each distinct text embedded once."""

from assay.embeddings.cache import EmbeddingCache
from assay.embeddings.engine import (
    PACKAGED_MODEL,
    Embedder,
    EmbeddingEngine,
    ModelUnavailableError,
    resolve_model_path,
    shared_engine,
)
from assay.embeddings.sentences import split_sentences

__all__ = [
    "PACKAGED_MODEL",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingEngine",
    "ModelUnavailableError",
    "resolve_model_path",
    "shared_engine",
    "split_sentences",
]
