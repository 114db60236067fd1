"""Document recall: share of ground-truth document URIs among the retrieved chunks' doc_uri."""

import pytest

from assay.models import RetrievedChunk
from evaluators import CaseContext, Unscored, build_evaluator, evaluator_class
from evaluators.runner import score_case


def recall(expected: list[str], retrieved: list[str]) -> float | None:
    chunks = [RetrievedChunk(text=f"chunk {rank}", doc_uri=uri, rank=rank) for rank, uri in enumerate(retrieved)]
    case = CaseContext.build(expected_retrieved_doc_uris=expected, retrieved_context=chunks)
    return build_evaluator("document_recall").score(case)["document_recall"]


@pytest.mark.parametrize(
    ("expected", "retrieved", "value"),
    [
        (["a", "b"], ["a", "c"], 0.5),  # the seed's example: one of two relevant documents found
        (["a", "b"], ["b", "a", "a"], 1.0),
        (["a", "b", "c"], ["c", "x", "y", "z"], round(1 / 3, 6)),  # not affected by how many were retrieved
        (["a"], ["x"], 0.0),
        (["a", "a", " b "], ["b"], 0.5),  # duplicates count once, whitespace is trimmed
        (["a", "b"], ["a", ""], 0.5),  # a chunk without a URI finds nothing
        (["kb://A"], ["kb://a"], 0.0),  # URIs compare exactly
    ],
)
def test_recall_of_known_rankings(expected: list[str], retrieved: list[str], value: float) -> None:
    assert recall(expected, retrieved) == value


def test_chunks_without_any_doc_uri_leave_the_case_unscored() -> None:
    with pytest.raises(Unscored, match="test case case: none of the 2 retrieved chunks has a doc_uri"):
        recall(["a"], ["", " "])


def test_blank_expected_uris_leave_the_case_unscored() -> None:
    with pytest.raises(Unscored, match="expected retrieved document URIs are all blank"):
        recall([" "], ["a"])


def test_no_retrieved_context_is_a_missing_input() -> None:
    outcome = score_case(build_evaluator("document_recall"), CaseContext.build(expected_retrieved_doc_uris=["a"]))
    assert outcome.unscored_reason == "missing input: retrieved_context"


def test_aggregate_name_follows_the_seeds() -> None:
    metric = evaluator_class("document_recall").spec.primary_metric
    assert (metric.key, metric.aggregate_name) == ("document_recall", "retrieval/ground_truth/document_recall/average")
