"""Context MRR: reciprocal ranks of known rankings (a fake embedder fixes every similarity), the out-of-range
index, the relevance threshold, one batched embedding call, and one check with the real model."""

from collections.abc import Sequence

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, build_evaluator, run_evaluator
from assay.evaluators.base import Scored

from assay.embeddings import EmbeddingEngine
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow

QUESTION = "What rate does the saver pay?"
# Unit vectors whose dot product with the question's [1, 0] is the similarity we want.
VECTORS = {
    QUESTION: [1.0, 0.0],
    "It pays 3.25% AER.": [1.0, 0.0],
    "The rate is variable.": [0.8, 0.6],  # similarity 0.8
    "Rates change often.": [0.6, 0.8],  # similarity 0.6
    "Branches open at 9am.": [0.0, 1.0],  # similarity 0.0
}
OFF_TOPIC = "Branches open at 9am."


class FakeEmbedder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([VECTORS[text] for text in texts], dtype=np.float32)


def scored(chunks: list[str], **parameters: object) -> Scored:
    evaluator = build_evaluator("context_mean_reciprocal_rank", Services(embedder_factory=FakeEmbedder), **parameters)
    result = evaluator.score(CaseContext.build(question=QUESTION, retrieved_context=chunks))
    assert isinstance(result, Scored)
    return result


def mrr(chunks: list[str], **parameters: object) -> float | None:
    return scored(chunks, **parameters).scores["mean_reciprocal_rank"]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["It pays 3.25% AER.", OFF_TOPIC], 1.0),
        ([OFF_TOPIC, "It pays 3.25% AER."], 0.5),
        ([OFF_TOPIC, OFF_TOPIC, OFF_TOPIC, OFF_TOPIC, "It pays 3.25% AER."], 0.2),
        ([OFF_TOPIC, "Rates change often.", "The rate is variable."], round(1 / 3, 6)),
        ([OFF_TOPIC, "Rates change often."], 0.0),
        ([OFF_TOPIC, f"{OFF_TOPIC} The rate is variable."], 0.5),  # best sentence of a chunk counts
        (["", "It pays 3.25% AER."], 0.5),  # an empty chunk is never relevant
    ],
)
def test_reciprocal_rank_of_the_first_relevant_chunk(chunks: list[str], expected: float) -> None:
    assert mrr(chunks) == expected


def test_threshold_decides_what_is_relevant() -> None:
    chunks = [OFF_TOPIC, "Rates change often.", "The rate is variable."]
    assert mrr(chunks, mrr_relevant_chunk_threshold=0.6) == 0.5
    assert mrr(chunks, mrr_relevant_chunk_threshold=0.9) == 0.0


def test_first_relevant_chunk_past_the_out_of_range_index_scores_zero() -> None:
    chunks = [OFF_TOPIC, OFF_TOPIC, "It pays 3.25% AER."]
    assert mrr(chunks, mrr_relevant_chunk_oor_idx=2) == round(1 / 3, 6)
    assert mrr(chunks, mrr_relevant_chunk_oor_idx=1) == 0.0


def test_chunks_are_taken_in_rank_order_not_list_order() -> None:
    chunks = [RetrievedChunk(text="It pays 3.25% AER.", rank=1), RetrievedChunk(text=OFF_TOPIC, rank=0)]
    assert mrr(chunks) == 0.5  # type: ignore[arg-type]


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match=r"mrr_relevant_chunk_threshold must be between 0\.0 and 1\.0"):
        build_evaluator("context_mean_reciprocal_rank", mrr_relevant_chunk_threshold=1.5)
    with pytest.raises(ValueError, match="mrr_relevant_chunk_oor_idx must be 0 or more"):
        build_evaluator("context_mean_reciprocal_rank", mrr_relevant_chunk_oor_idx=-1)


def test_a_run_embeds_every_distinct_text_once_and_averages_the_cases() -> None:
    fake = FakeEmbedder()
    rows = [
        TestLabRow(
            test_case=TestCase(key=key, prompt=QUESTION),
            model_key="m",
            actual_output="a",
            context=[RetrievedChunk(text=text, rank=rank) for rank, text in enumerate(chunks)],
        )
        for key, chunks in {
            "first": ["It pays 3.25% AER."],
            "second": [OFF_TOPIC, "It pays 3.25% AER."],
            "none": [OFF_TOPIC],
        }.items()
    ]
    lab = TestLab(name="l", models=[ModelHost(key="m", type="t")], rows=rows)
    evaluator = build_evaluator("context_mean_reciprocal_rank", Services(embedder_factory=lambda: fake))
    result = run_evaluator(evaluator, lab)
    assert result.aggregates["m"]["mean_reciprocal_rank"].mean == 0.5  # (1 + 1/2 + 0) / 3
    assert sorted(fake.calls[0]) == sorted({QUESTION, "It pays 3.25% AER.", OFF_TOPIC})


def test_real_model_finds_the_answering_chunk(engine: EmbeddingEngine) -> None:
    evaluator = build_evaluator("context_mean_reciprocal_rank", Services(embedder_factory=lambda: engine))
    case = CaseContext.build(
        question="How much is the late payment fee?",
        retrieved_context=["Branches open at 9am on Saturdays.", "The late payment fee is £25 per missed payment."],
    )
    evaluator.prepare([case])
    result = evaluator.score(case)
    assert isinstance(result, Scored) and result.scores == {"mean_reciprocal_rank": 0.5}
    assert result.details["first_relevant_rank"] == 2


@pytest.mark.parametrize(
    ("chunks", "details"),
    [
        (["It pays 3.25% AER.", OFF_TOPIC], {"first_relevant_rank": 1, "relevance": 1.0}),
        ([OFF_TOPIC, "Rates change often.", "The rate is variable."], {"first_relevant_rank": 3, "relevance": 0.8}),
        (
            [OFF_TOPIC, "Rates change often."],
            {"first_relevant_rank": None, "checked_chunks": 2, "best_relevance": 0.6},
        ),
        ([], {"first_relevant_rank": None, "checked_chunks": 0, "best_relevance": 0.0}),
    ],
)
def test_details_give_the_first_relevant_rank_or_the_best_relevance_seen(chunks: list[str], details: dict) -> None:
    assert scored(chunks).details == details


def test_details_count_only_the_chunks_within_the_out_of_range_index() -> None:
    chunks = [OFF_TOPIC, OFF_TOPIC, "It pays 3.25% AER."]
    assert scored(chunks, mrr_relevant_chunk_oor_idx=1).details == {
        "first_relevant_rank": None,
        "checked_chunks": 2,
        "best_relevance": 0.0,
    }
