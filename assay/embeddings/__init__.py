"""Embeddings shared by hosts and evaluators: one engine per process, each distinct text embedded once."""

from assay.embeddings.backends import BACKENDS, BackendUnavailableError
from assay.embeddings.cache import CACHE_FILE_NAME, EmbeddingCache
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
    "BACKENDS",
    "CACHE_FILE_NAME",
    "PACKAGED_MODEL",
    "BackendUnavailableError",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingEngine",
    "ModelUnavailableError",
    "resolve_model_path",
    "shared_engine",
    "split_sentences",
]
