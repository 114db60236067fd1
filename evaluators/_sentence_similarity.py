"""Shared by the sentence-embedding evaluators: splitting, one batched embed per run, cosine matrices.

Embedding is the cost floor of these evaluators, so ``prepare`` hands every distinct text of every case to
the engine in a single call; the engine memoises, and the per-case calls in ``score`` are then free.
"""

from collections.abc import Iterable, Sequence

import numpy as np

from assay.embeddings import Embedder, split_sentences


def sentences_of(text: str) -> list[str]:
    """Sentences of ``text``; a non-blank text the splitter cannot segment counts as one sentence."""
    return split_sentences(text) or ([text.strip()] if text.strip() else [])


def embed_distinct(embedder: Embedder, texts: Iterable[str]) -> None:
    """Embed every distinct non-empty text in one call, so later per-case lookups hit the engine's memo."""
    distinct = list(dict.fromkeys(text for text in texts if text))
    if distinct:
        embedder.embed(distinct)


def similarity_matrix(embedder: Embedder, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
    """Cosine similarity of every row text with every column text, clipped into [0, 1].

    The engine returns unit vectors, so the dot product is the cosine (1 - cosine distance, the seed's S).
    """
    vectors = embedder.embed([*rows, *columns])
    return np.clip(vectors[: len(rows)] @ vectors[len(rows) :].T, 0.0, 1.0)


def rounded(value: float) -> float:
    """Six decimals: the same case scores identically whatever batch its embeddings were computed in."""
    return round(float(value), 6)
