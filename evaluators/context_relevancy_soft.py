"""Context relevancy (soft recall and precision): is the retrieved context about the question (seed 002).

A chunk is as relevant as its sentence closest to the question, so a long chunk is not penalised for the
sentences around the one that matters. The best chunk says whether retrieval found anything relevant (soft
recall); the average chunk says how much of what was retrieved is noise (soft precision). Precision is the
primary metric: like the judge-based context relevancy (relevant share of the context), it flags contexts
padded with off-topic chunks, which recall cannot see.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from assay.evaluators._sentence_similarity import SentenceSimilarityEvaluator, sentences_of, similarity_spec
from assay.evaluators.base import CaseContext, Unscored, golden_contexts, score_metric
from assay.evaluators.registry import register


@register
@dataclass
class ContextRelevancySoft(SentenceSimilarityEvaluator):
    spec = similarity_spec(
        "context_relevancy_soft",
        "Context relevancy (soft recall and precision)",
        "Relevancy of the retrieved context to the question from sentence embeddings. Each chunk's relevancy "
        "is the highest cosine similarity between the question and one of the chunk's sentences; recall "
        "relevancy is the best chunk's relevancy and precision relevancy the average over the chunks.",
        [
            score_metric(
                "recall_relevancy",
                "Recall relevancy",
                "Maximum retrieved context chunk relevancy: whether any chunk addresses the question.",
            ),
            score_metric(
                "precision_relevancy",
                "Precision relevancy",
                "Average retrieved context chunk relevancy: how much of the context is on topic.",
                primary=True,
            ),
        ],
        keywords=["embeddings", "retrieval", "relevancy", "context", "rag"],
        required_inputs=["question", "retrieved_context"],
    )

    golden = golden_contexts(
        [
            "Easy Access Saver. The Easy Access Saver pays an interest rate of 3.25% AER.",
            "What interest rate does the Easy Access Saver pay? It pays 3.25% AER, paid monthly.",
        ],
        [
            "Our branches open at 9am on Saturdays.",
            "Report a lost card by calling 0800 555 0142.",
        ],
        question="What interest rate does the Easy Access Saver pay?",
    )

    split_inputs = ("retrieved_context",)

    @staticmethod
    def texts(case: CaseContext) -> Iterable[str]:
        return (case.question, *(s for chunk in case.retrieved_context for s in sentences_of(chunk.text)))

    def similarities(self, case: CaseContext) -> dict[str, float]:
        chunks = [sentences_of(chunk.text) for chunk in case.retrieved_context]
        sentences = [sentence for chunk in chunks for sentence in chunk]
        if not sentences:
            raise Unscored(f"test case {case.test_case_key}: every retrieved context chunk is blank")
        similarities = self.cosines([case.question], sentences)[0]
        chunk_relevancy: list[float] = []
        start = 0
        for chunk in chunks:  # a blank chunk takes a retrieval slot and brings nothing: relevancy 0
            chunk_relevancy.append(float(similarities[start : start + len(chunk)].max()) if chunk else 0.0)
            start += len(chunk)
        return {
            "recall_relevancy": max(chunk_relevancy),
            "precision_relevancy": sum(chunk_relevancy) / len(chunk_relevancy),
        }
