from collections.abc import Sequence

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, build_evaluator
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


VECTORS = {
    "What is the rate?": (1.0, 0.0),
    "It is 3%.": (0.8, 0.6),
    "Hello there.": (0.0, 1.0),
    "Goodbye.": (-0.6, 0.8),
    "What is the fee?": (0.6, 0.8),
}


def evaluator_with(table: VectorTable):  # type: ignore[no-untyped-def]
    return build_evaluator("answer_relevancy_sentence_similarity", Services(embedder_factory=lambda: table))


def test_the_most_relevant_sentence_decides() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(question="What is the rate?", actual_output="Hello there. It is 3%. Goodbye.")
    assert evaluator.score(case) == {"answer_relevancy": 0.8}


def test_an_answer_of_unrelated_sentences_scores_their_best_clipped_cosine() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    assert evaluator.score(CaseContext.build(question="What is the rate?", actual_output="Goodbye.")) == {
        "answer_relevancy": 0.0
    }
    assert evaluator.score(CaseContext.build(question="What is the fee?", actual_output="Hello there. Goodbye.")) == {
        "answer_relevancy": 0.8
    }


def test_prepare_embeds_questions_and_answer_sentences_once_in_one_call() -> None:
    table = VectorTable(VECTORS)
    evaluator = evaluator_with(table)
    evaluator.prepare(
        [
            CaseContext.build(question="What is the rate?", actual_output="It is 3%. Hello there."),
            CaseContext.build(question="What is the fee?", actual_output="It is 3%."),
        ]
    )
    assert table.calls == [["What is the rate?", "It is 3%.", "Hello there.", "What is the fee?"]]


def test_a_case_without_a_question_is_unscored() -> None:
    outcome = score_case(evaluator_with(VectorTable(VECTORS)), CaseContext.build(actual_output="It is 3%."))
    assert outcome.unscored_reason == "missing input: question" and outcome.scores == {}


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def test_an_answer_that_restates_the_question_scores_one(services: Services) -> None:
    evaluator = build_evaluator("answer_relevancy_sentence_similarity", services)
    question = "What interest rate does the Easy Access Saver pay?"
    restated = evaluator.score(
        CaseContext.build(question=question, actual_output=f"Thanks for asking. {question} It pays 3.25% AER.")
    )
    on_topic = evaluator.score(CaseContext.build(question=question, actual_output="It pays 3.25% AER."))
    off_topic = evaluator.score(CaseContext.build(question=question, actual_output="Branches open at 9am."))
    assert restated == {"answer_relevancy": 1.0}
    assert off_topic["answer_relevancy"] < 0.3 < on_topic["answer_relevancy"] < 1.0
