"""Fractions done (0..1) reported by long library calls, so a caller can show a progress bar (the MRM flow
shows one per step in the Prefect UI) without the library knowing who listens.

A long call takes an optional ``progress`` callback and splits its 0..1 among its phases with :func:`part`;
work done in batches reports after each batch. ``REPORTS`` batches per phase keep every silent stretch of a
phase under a tenth of it, whatever the input's size."""

import math
from collections.abc import Callable, Sequence

import numpy as np

from assay.embeddings.engine import Embedder

Progress = Callable[[float], None]
REPORTS = 20


def part(progress: Progress | None, start: float, end: float) -> Progress | None:
    """The callback of a phase that takes ``start..end`` of the whole: its own 0..1 is mapped there."""
    if progress is None:
        return None
    return lambda fraction: progress(start + (end - start) * fraction)


def report(progress: Progress | None, fraction: float) -> None:
    """Tell ``progress``, where one listens, the fraction done."""
    if progress is not None:
        progress(fraction)


def batches(count: int, reports: int = REPORTS) -> list[range]:
    """``range(count)`` cut into at most ``reports`` consecutive batches of nearly equal size."""
    size = max(1, math.ceil(count / reports))
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def embed_reporting(embedder: Embedder, texts: Sequence[str], progress: Progress | None) -> np.ndarray:
    """``embedder.embed(texts)``; with ``progress``, in batches with a report after each. Without one the
    texts go in one call, where the engine batches at its best."""
    if progress is None or not texts:
        return np.asarray(embedder.embed(texts))
    parts, cuts = [], batches(len(texts))
    for done, batch in enumerate(cuts, start=1):
        parts.append(np.asarray(embedder.embed([texts[index] for index in batch])))
        progress(done / len(cuts))
    return np.concatenate(parts)
