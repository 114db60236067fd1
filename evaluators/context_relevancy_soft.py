"""Context relevancy (soft recall and precision): is the retrieved context about the question (seed 002).

A chunk is as relevant as its sentence closest to the question, so a long chunk is not penalised for the
sentences around the one that matters. The best chunk says whether retrieval found anything relevant (soft
recall); the average chunk says how much of what was retrieved is noise (soft precision). Precision is the
primary metric: like the judge-based context relevancy (relevant share of the context), it flags contexts
padded with off-topic chunks, which recall cannot see.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluators._sentence_similarity import embed_distinct, rounded, sentences_of, similarity_matrix
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator, Unscored
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta

SPLIT_INPUTS = ("retrieved_context",)


@register
@dataclass
class ContextRelevancySoft(Evaluator):
    spec = EvaluatorSpec(
        id="context_relevancy_soft",
        display_name="Context relevancy (soft recall and precision)",
        description=(
            "Relevancy of the retrieved context to the question from sentence embeddings. Each chunk's relevancy "
            "is the highest cosine similarity between the question and one of the chunk's sentences; recall "
            "relevancy is the best chunk's relevancy and precision relevancy the average over the chunks."
        ),
        domain="retrieval",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["question", "retrieved_context"],
        needs=["embeddings"],
        metrics=[
            MetricMeta(
                key="recall_relevancy",
                display_name="Recall relevancy",
                description="Maximum retrieved context chunk relevancy: whether any chunk addresses the question.",
                higher_is_better=True,
                threshold=0.75,
            ),
            MetricMeta(
                key="precision_relevancy",
                display_name="Precision relevancy",
                description="Average retrieved context chunk relevancy: how much of the context is on topic.",
                higher_is_better=True,
                threshold=0.75,
                is_primary=True,
            ),
        ],
        keywords=["embeddings", "retrieval", "relevancy", "context", "rag"],
    )

    golden = {
        "good": {
            "question": "What interest rate does the Easy Access Saver pay?",
            "retrieved_context": [
                "Easy Access Saver. The Easy Access Saver pays an interest rate of 3.25% AER.",
                "What interest rate does the Easy Access Saver pay? It pays 3.25% AER, paid monthly.",
            ],
        },
        "bad": {
            "question": "What interest rate does the Easy Access Saver pay?",
            "retrieved_context": [
                "Our branches open at 9am on Saturdays.",
                "Report a lost card by calling 0800 555 0142.",
            ],
        },
    }

    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the default threshold of the primary metric."}
    )

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        cases = within_bound(cases, SPLIT_INPUTS)
        embed_distinct(
            self.services.embedder,
            (
                text
                for case in cases
                for text in (case.question, *(s for chunk in case.retrieved_context for s in sentences_of(chunk.text)))
            ),
        )

    def score(self, case: CaseContext) -> dict[str, float | None]:
        check_bound(case, SPLIT_INPUTS)
        chunks = [sentences_of(chunk.text) for chunk in case.retrieved_context]
        sentences = [sentence for chunk in chunks for sentence in chunk]
        if not sentences:
            raise Unscored(f"test case {case.test_case_key}: every retrieved context chunk is blank")
        similarities = similarity_matrix(self.services.embedder, [case.question], sentences)[0]
        chunk_relevancy: list[float] = []
        start = 0
        for chunk in chunks:  # a blank chunk takes a retrieval slot and brings nothing: relevancy 0
            chunk_relevancy.append(float(similarities[start : start + len(chunk)].max()) if chunk else 0.0)
            start += len(chunk)
        return {
            "recall_relevancy": rounded(max(chunk_relevancy)),
            "precision_relevancy": rounded(sum(chunk_relevancy) / len(chunk_relevancy)),
        }
