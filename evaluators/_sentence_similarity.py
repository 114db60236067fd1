"""Shared by the sentence-embedding evaluators: splitting, one batched embed per run, cosine matrices.

Embedding is the cost floor of these evaluators, so ``prepare`` hands every distinct text of every case to
the engine in a single call; the engine memoises, and the per-case calls in ``score`` are then free.
"""

from abc import abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator

from assay.embeddings import Embedder, split_sentences
from assay.models.evaluation import CaseInput, EvaluatorSpec, MetricMeta, Need


def similarity_spec(
    id: str,
    display_name: str,
    description: str,
    metrics: list[MetricMeta],
    keywords: Sequence[str],
    *,
    required_inputs: Sequence[CaseInput],
    needs: Sequence[Need] = ("embeddings",),
) -> EvaluatorSpec:
    """The spec of an evaluator scoring by embedding similarity: what differs is its row of arguments. One that
    reads the retrieved context is for RAG, and filed under retrieval unless it scores the actual answer (against
    that context); the others under generation."""
    retrieval = "retrieved_context" in required_inputs
    return EvaluatorSpec(
        id=id,
        display_name=display_name,
        description=description,
        domain="retrieval" if retrieval and "actual_output" not in required_inputs else "generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        **({"model_types": ["rag"]} if retrieval else {}),
        required_inputs=list(required_inputs),
        needs=list(needs),
        metrics=metrics,
        keywords=list(keywords),
    )


def sentences_of(text: str) -> list[str]:
    """Sentences of ``text``; a non-blank text the splitter cannot segment counts as one sentence."""
    return split_sentences(text) or ([text.strip()] if text.strip() else [])


def embed_distinct(embedder: Embedder, texts: Iterable[str]) -> None:
    """Embed every distinct non-empty text in one call, so later per-case lookups hit the engine's memo."""
    distinct = list(dict.fromkeys(text for text in texts if text))
    if distinct:
        embedder.embed(distinct)


def embed_cases(
    embedder: Embedder,
    cases: Sequence[CaseContext],
    split_inputs: Sequence[str],
    texts_of: Callable[[CaseContext], Iterable[str]],
) -> None:
    """``prepare`` of a sentence-similarity evaluator: one embed call for the distinct texts (``texts_of``) of
    the cases whose ``split_inputs`` are within the splitter's bound (the others are unscored by ``score``)."""
    embed_distinct(embedder, (text for case in within_bound(cases, split_inputs) for text in texts_of(case)))


def similarity_matrix(embedder: Embedder, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
    """Cosine similarity of every row text with every column text, clipped into [0, 1].

    The engine returns unit vectors, so the dot product is the cosine (1 - cosine distance, the seed's S).
    """
    vectors = embedder.embed([*rows, *columns])
    return np.clip(vectors[: len(rows)] @ vectors[len(rows) :].T, 0.0, 1.0)


def rounded(value: float) -> float:
    """Six decimals: the same case scores identically whatever batch its embeddings were computed in."""
    return round(float(value), 6)


@dataclass
class SentenceSimilarityEvaluator(Evaluator):
    """An evaluator comparing texts sentence by sentence (answer relevancy, answer sentence similarity, context
    relevancy): ``prepare`` embeds what every case compares (``texts``) in one call, and ``score`` checks that
    the ``split_inputs`` are within the splitter's bound before computing the case's ``similarities``, rounded
    (``rounded``)."""

    split_inputs: ClassVar[tuple[str, ...]]
    """The inputs split into sentences, in the order their bound is checked."""

    @staticmethod
    @abstractmethod
    def texts(case: CaseContext) -> Iterable[str]:
        """What ``prepare`` embeds for ``case``."""

    @abstractmethod
    def similarities(self, case: CaseContext) -> dict[str, float]:
        """The case's scores (``score`` rounds them), once its inputs are known to be within the bound."""

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        embed_cases(self.services.embedder, cases, self.split_inputs, self.texts)

    def score(self, case: CaseContext) -> dict[str, float | None]:
        check_bound(case, self.split_inputs)
        return {key: rounded(value) for key, value in self.similarities(case).items()}

    def cosines(self, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """``similarity_matrix`` with this evaluator's embedder."""
        return similarity_matrix(self.services.embedder, rows, columns)
