"""Context mean reciprocal rank: how high the retriever ranked its first relevant chunk (seed 002).

The seed defines a chunk as relevant when the best-matching of its sentences is similar enough to the query:
relevance = max over the chunk's sentences of (1 - cosine distance to the question), relevant when it reaches
``mrr_relevant_chunk_threshold``. A case scores 1 / rank of the first relevant chunk (0 when none is relevant
or the first one lies past ``mrr_relevant_chunk_oor_idx``); the model's value is the mean over its cases.
The seed embeds with BAAI/bge-small-en; Assay uses its packaged embedding model, so the threshold may need
tuning for a different model.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluators._sentence_similarity import similarity_spec
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator, Scored, cosine, golden_contexts, score_metric
from assay.evaluators.registry import register

from assay.embeddings import split_sentences
from assay.models import RetrievedChunk
from assay.models.evaluation import on_good_side

SPLIT_INPUTS = ("retrieved_context",)


def ranked(chunks: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    """Chunks in the retriever's order (stable, so equal ranks keep the order the host reported)."""
    return sorted(chunks, key=lambda chunk: chunk.rank)


@register
@dataclass
class ContextMeanReciprocalRank(Evaluator):
    spec = similarity_spec(
        "context_mean_reciprocal_rank",
        "Context mean reciprocal rank",
        "Mean reciprocal rank of the first relevant retrieved chunk. A chunk is relevant when one of its "
        "sentences is similar enough to the question (embedding cosine similarity at or above the "
        "relevance threshold); a case scores 1 / rank of its first relevant chunk, 0 when none is.",
        [
            score_metric(
                "mean_reciprocal_rank",
                "Mean reciprocal rank",
                "Reciprocal rank of the first relevant retrieved chunk (1.0 at rank 1, 0.2 at rank 5, "
                "0.0 when none is relevant), averaged over the cases.",
                primary=True,
            )
        ],
        keywords=["retrieval", "ranking", "mrr", "embeddings", "rag"],
        required_inputs=["question", "retrieved_context"],
    )

    golden = golden_contexts(
        [
            "The Easy Access Saver pays an interest rate of 3.25% AER. Interest is paid monthly.",
            "Our branches open at 9am on Saturdays.",
        ],
        [
            "Our branches open at 9am on Saturdays.",
            "Lost cards can be frozen in the mobile app.",
        ],
        question="What interest rate does the Easy Access Saver pay?",
    )

    mrr_relevant_chunk_threshold: float = field(
        default=0.7,
        metadata={
            "description": (
                "Relevance score (max cosine similarity of a chunk sentence and the question) from which a "
                "retrieved chunk counts as relevant; between 0.0 and 1.0."
            )
        },
    )
    mrr_relevant_chunk_oor_idx: int = field(
        default=10,
        metadata={
            "description": (
                "Highest 0-based position of a retrieved chunk that still counts: a first relevant chunk "
                "beyond it is out of range and the case's reciprocal rank is 0.0."
            )
        },
    )

    def __post_init__(self) -> None:
        if not 0.0 <= self.mrr_relevant_chunk_threshold <= 1.0:
            raise ValueError(
                "context_mean_reciprocal_rank: mrr_relevant_chunk_threshold must be between 0.0 and 1.0, "
                f"got {self.mrr_relevant_chunk_threshold}"
            )
        if self.mrr_relevant_chunk_oor_idx < 0:
            raise ValueError(
                "context_mean_reciprocal_rank: mrr_relevant_chunk_oor_idx must be 0 or more, "
                f"got {self.mrr_relevant_chunk_oor_idx}"
            )

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        cases = within_bound(cases, SPLIT_INPUTS)
        texts = {case.question for case in cases}
        for case in cases:
            texts.update(sentence for chunk in case.retrieved_context for sentence in split_sentences(chunk.text))
        if texts:
            self.services.embedder.embed(sorted(texts))

    def relevance(self, question: str, chunk: RetrievedChunk) -> float:
        """Best similarity of one of the chunk's sentences to the question; 0.0 for a chunk without text."""
        sentences = split_sentences(chunk.text)
        if not sentences:
            return 0.0
        vectors = self.services.embedder.embed([question, *sentences])
        return max(cosine(vectors[0], vector) for vector in vectors[1:])

    def score(self, case: CaseContext) -> Scored:
        """1 / rank of the first relevant chunk; the details give that rank and its relevance, or, when no
        checked chunk is relevant, the best relevance seen, which shows how far the threshold is."""
        check_bound(case, SPLIT_INPUTS)
        chunks = ranked(case.retrieved_context)[: self.mrr_relevant_chunk_oor_idx + 1]
        best = 0.0
        for position, chunk in enumerate(chunks):
            relevance = self.relevance(case.question, chunk)
            if on_good_side(relevance, self.mrr_relevant_chunk_threshold, True):
                return Scored(
                    scores={"mean_reciprocal_rank": round(1.0 / (position + 1), 6)},
                    details={"first_relevant_rank": position + 1, "relevance": round(relevance, 6)},
                )
            best = max(best, relevance)
        return Scored(
            scores={"mean_reciprocal_rank": 0.0},
            details={"first_relevant_rank": None, "checked_chunks": len(chunks), "best_relevance": round(best, 6)},
        )
