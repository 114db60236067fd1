from collections.abc import Sequence

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, Unscored, build_evaluator
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine


class VectorTable:
    """A fake embedder with hand-picked unit vectors, so every expected score is exact arithmetic."""

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = {text: np.asarray(vector, dtype=np.float32) for text, vector in vectors.items()}
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self.vectors[text] for text in texts])


QUESTION = "What is the rate?"
VECTORS = {
    QUESTION: (1.0, 0.0, 0.0),
    "The rate is 3%.": (0.8, 0.6, 0.0),
    "Branches open at 9.": (0.0, 1.0, 0.0),
    "Rates change monthly.": (0.6, 0.0, 0.8),
    "Cards are blue.": (-0.6, 0.8, 0.0),
}


def evaluator_with(table: VectorTable):  # type: ignore[no-untyped-def]
    return build_evaluator("context_relevancy_soft", Services(embedder_factory=lambda: table))


def test_recall_is_the_best_chunk_and_precision_the_average_chunk() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(
        question=QUESTION,
        retrieved_context=["Branches open at 9. The rate is 3%.", "Rates change monthly.", "Cards are blue."],
    )
    # chunk relevancies: 0.8 (its best sentence), 0.6, 0.0 (negative cosine clipped)
    assert evaluator.score(case) == {"recall_relevancy": 0.8, "precision_relevancy": round(1.4 / 3, 6)}


def test_a_blank_chunk_counts_as_irrelevant_and_an_all_blank_context_is_unscored() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(question=QUESTION, retrieved_context=["The rate is 3%.", "  "])
    assert evaluator.score(case) == {"recall_relevancy": 0.8, "precision_relevancy": 0.4}
    with pytest.raises(Unscored, match="test case blank: every retrieved context chunk is blank"):
        evaluator.score(CaseContext.build(test_case_key="blank", question=QUESTION, retrieved_context=[""]))


def test_prepare_embeds_every_distinct_text_in_one_call() -> None:
    table = VectorTable(VECTORS)
    evaluator = evaluator_with(table)
    evaluator.prepare(
        [
            CaseContext.build(question=QUESTION, retrieved_context=["The rate is 3%. Cards are blue."]),
            CaseContext.build(question=QUESTION, retrieved_context=["Cards are blue.", "Rates change monthly."]),
        ]
    )
    assert table.calls == [[QUESTION, "The rate is 3%.", "Cards are blue.", "Rates change monthly."]]


def test_a_case_without_retrieved_context_is_unscored() -> None:
    outcome = score_case(evaluator_with(VectorTable(VECTORS)), CaseContext.build(question=QUESTION))
    assert outcome.unscored_reason == "missing input: retrieved_context"


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def test_a_chunk_stating_the_question_is_fully_relevant_and_noise_lowers_precision(services: Services) -> None:
    evaluator = build_evaluator("context_relevancy_soft", services)
    question = "How do I report a lost debit card?"
    focused = evaluator.score(
        CaseContext.build(question=question, retrieved_context=[f"Cards. {question} Call 0800 555 0142."])
    )
    noisy = evaluator.score(
        CaseContext.build(
            question=question,
            retrieved_context=[f"Cards. {question} Call 0800 555 0142.", "The Cash ISA pays 4.1% AER."],
        )
    )
    assert focused == {"recall_relevancy": 1.0, "precision_relevancy": 1.0}
    assert noisy["recall_relevancy"] == 1.0 and 0.5 < noisy["precision_relevancy"] < 0.65
