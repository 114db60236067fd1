"""Retrievers of the built-in sample systems: dense (embeddings) and lexical (BM25)."""

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import regex
from rank_bm25 import BM25Okapi
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from assay.embeddings.engine import Embedder
from assay.models import Chunk

_WORD = regex.compile(r"[\p{L}\p{N}]+(?:[.,'][\p{L}\p{N}]+)*")

Hits = list[tuple[int, float]]


class Retriever(Protocol):
    def search(self, queries: Sequence[str], k: int) -> list[Hits]: ...


def keyword_tokens(text: str) -> list[str]:
    return [token for token in (t.lower() for t in _WORD.findall(text)) if token not in ENGLISH_STOP_WORDS]


class EmbeddingRetriever:
    def __init__(self, chunks: Sequence[Chunk], embedder: Embedder) -> None:
        self.embedder = embedder
        self.matrix = embedder.embed([chunk.text for chunk in chunks])

    def search(self, queries: Sequence[str], k: int) -> list[Hits]:
        scores = self.embedder.embed(list(queries)) @ self.matrix.T
        return [_top(row, k) for row in scores]


class KeywordRetriever:
    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.index = BM25Okapi([keyword_tokens(chunk.text) or ["\x00"] for chunk in chunks])

    def search(self, queries: Sequence[str], k: int) -> list[Hits]:
        return [_top(self.index.get_scores(keyword_tokens(query)), k) for query in queries]


def _top(scores: np.ndarray, k: int) -> Hits:
    order = np.argsort(-scores, kind="stable")[:k]
    return [(int(index), float(scores[index])) for index in order]
