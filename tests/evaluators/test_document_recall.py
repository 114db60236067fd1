"""Document recall: share of ground-truth document URIs among the retrieved chunks' doc_uri."""

import pytest
from assay.evaluators import CaseContext, Unscored, build_evaluator, evaluator_class
from assay.evaluators.base import Scored
from assay.evaluators.runner import score_case

from assay.models import RetrievedChunk


def scored(expected: list[str], retrieved: list[str]) -> Scored:
    chunks = [RetrievedChunk(text=f"chunk {rank}", doc_uri=uri, rank=rank) for rank, uri in enumerate(retrieved)]
    case = CaseContext.build(expected_retrieved_doc_uris=expected, retrieved_context=chunks)
    result = build_evaluator("document_recall").score(case)
    assert isinstance(result, Scored)
    return result


def recall(expected: list[str], retrieved: list[str]) -> float | None:
    return scored(expected, retrieved).scores["document_recall"]


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


@pytest.mark.parametrize(
    ("expected", "retrieved", "missing"),
    [
        (["kb://b", "kb://a", "kb://c"], ["kb://c", "kb://x"], ["kb://a", "kb://b"]),  # sorted, for stable reports
        ([" kb://a ", "kb://a", "kb://b"], ["kb://b"], ["kb://a"]),  # trimmed and counted once
        (["kb://A"], ["kb://a"], ["kb://A"]),
    ],
)
def test_details_name_the_missing_documents(expected: list[str], retrieved: list[str], missing: list[str]) -> None:
    assert scored(expected, retrieved).details == {"missing_doc_uris": missing}


def test_details_are_empty_when_every_document_was_found() -> None:
    assert scored(["a", "b"], ["b", "a"]).details == {}


def test_details_reach_the_results_row() -> None:
    chunks = [RetrievedChunk(text="c", doc_uri="a", rank=0)]
    case = CaseContext.build(expected_retrieved_doc_uris=["a", "b"], retrieved_context=chunks)
    outcome = score_case(build_evaluator("document_recall"), case)
    assert outcome.scores == {"document_recall": 0.5} and outcome.details == {"missing_doc_uris": ["b"]}
