"""Document recall: how many of the known relevant documents the retriever found (seeds 001/003).

Deterministic and ground-truth based: the share of the test case's expected document URIs that appear as the
``doc_uri`` of at least one retrieved chunk. It does not depend on how many chunks were retrieved, so it is
read next to a precision-style metric. URIs are compared exactly (after trimming surrounding whitespace);
duplicate expected URIs count once.
"""

from dataclasses import dataclass
from typing import ClassVar

from assay.evaluators.base import CaseContext, Evaluator, Scored, Unscored, golden_contexts, score_metric
from assay.evaluators.registry import register

from assay.models import RetrievedChunk
from assay.models.evaluation import EvaluatorSpec


@register
@dataclass
class DocumentRecall(Evaluator):
    threshold_note: ClassVar[str] = "The seeds define none; Assay uses 0.75."
    spec = EvaluatorSpec(
        id="document_recall",
        display_name="Document recall",
        description=(
            "Share of the ground-truth documents (the test case's expected retrieved document URIs) that the "
            "retriever returned, i.e. that appear as the doc_uri of a retrieved chunk. Not affected by how "
            "many chunks were retrieved."
        ),
        domain="retrieval",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["expected_retrieved_doc_uris", "retrieved_context"],
        metrics=[
            score_metric(
                "document_recall",
                "Document recall",
                "Ground-truth document URIs found among the retrieved chunks / all ground-truth URIs.",
                primary=True,
                aggregate_name="retrieval/ground_truth/document_recall/average",
            )
        ],
        keywords=["retrieval", "recall", "ground-truth", "documents", "rag"],
    )

    golden = golden_contexts(
        [
            RetrievedChunk(text="The Easy Access Saver pays 3.25% AER.", doc_uri="kb://savings/rates", rank=0),
            RetrievedChunk(text="Withdraw at any time without a fee.", doc_uri="kb://savings/easy-access", rank=1),
        ],
        [
            RetrievedChunk(text="Our branches open at 9am on Saturdays.", doc_uri="kb://branches/hours", rank=0),
            RetrievedChunk(text="Lost cards can be frozen in the app.", doc_uri="kb://cards/lost", rank=1),
        ],
        expected_retrieved_doc_uris=["kb://savings/easy-access", "kb://savings/rates"],
    )


    def score(self, case: CaseContext) -> Scored:
        retrieved = {chunk.doc_uri.strip() for chunk in case.retrieved_context if chunk.doc_uri.strip()}
        if not retrieved:
            raise Unscored(
                f"test case {case.test_case_key}: none of the {len(case.retrieved_context)} retrieved chunks "
                "has a doc_uri, so found documents cannot be matched to the expected ones"
            )
        expected = {uri.strip() for uri in case.expected_retrieved_doc_uris if uri.strip()}
        if not expected:
            raise Unscored(f"test case {case.test_case_key}: the expected retrieved document URIs are all blank")
        scores: dict[str, float | None] = {"document_recall": round(len(expected & retrieved) / len(expected), 6)}
        missing = sorted(expected - retrieved)
        return Scored(scores=scores, details={"missing_doc_uris": missing} if missing else {})
