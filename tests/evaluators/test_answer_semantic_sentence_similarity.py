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
    "Alpha one.": (1.0, 0.0, 0.0),
    "Beta two.": (0.0, 1.0, 0.0),
    "Gamma three.": (0.6, 0.8, 0.0),
    "Delta four.": (0.0, 0.0, 1.0),
    "Opposite five.": (-1.0, 0.0, 0.0),
}


def evaluator_with(table: VectorTable):  # type: ignore[no-untyped-def]
    return build_evaluator("answer_semantic_sentence_similarity", Services(embedder_factory=lambda: table))


def test_each_actual_sentence_takes_its_best_expected_match() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(actual_output="Alpha one. Beta two.", expected_output="Gamma three. Delta four.")
    # Alpha's best is Gamma (0.6), Beta's best is Gamma (0.8): mean 0.7, min 0.6.
    assert evaluator.score(case) == {"mean_answer_similarity": 0.7, "min_answer_similarity": 0.6}


def test_an_expected_sentence_may_back_several_actual_ones_and_negative_cosines_clip_to_zero() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(actual_output="Alpha one. Opposite five.", expected_output="Alpha one.")
    assert evaluator.score(case) == {"mean_answer_similarity": 0.5, "min_answer_similarity": 0.0}


def test_extra_expected_sentences_do_not_lower_the_score() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(actual_output="Beta two.", expected_output="Alpha one. Beta two. Delta four.")
    assert evaluator.score(case) == {"mean_answer_similarity": 1.0, "min_answer_similarity": 1.0}


def test_prepare_embeds_every_distinct_sentence_of_every_case_in_one_call() -> None:
    table = VectorTable(VECTORS)
    evaluator = evaluator_with(table)
    cases = [
        CaseContext.build(actual_output="Alpha one. Beta two.", expected_output="Gamma three."),
        CaseContext.build(actual_output="Beta two.", expected_output="Delta four. Alpha one."),
    ]
    evaluator.prepare(cases)
    assert table.calls == [["Alpha one.", "Beta two.", "Gamma three.", "Delta four."]]


def test_a_missing_answer_is_unscored_not_zero() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    outcome = score_case(evaluator, CaseContext.build(actual_output="   ", expected_output="Alpha one."))
    assert outcome.unscored_reason == "missing input: actual_output" and outcome.scores == {}


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def test_one_sentence_answers_score_as_the_whole_answer_cosine(services: Services) -> None:
    fields = {
        "actual_output": "Balances from £10,000 earn 3.25% AER.",
        "expected_output": "The Easy Access Saver pays 3.25% AER on balances from £10,000.",
    }
    whole = build_evaluator("answer_semantic_similarity", services).score(CaseContext.build(**fields))
    sentences = build_evaluator("answer_semantic_sentence_similarity", services).score(CaseContext.build(**fields))
    assert sentences["mean_answer_similarity"] == sentences["min_answer_similarity"] == whole["answer_similarity"]


def test_one_unsupported_sentence_shows_in_the_minimum(services: Services) -> None:
    evaluator = build_evaluator("answer_semantic_sentence_similarity", services)
    expected = "The Easy Access Saver pays 3.25% AER. Interest is paid monthly."
    faithful = evaluator.score(CaseContext.build(actual_output=expected, expected_output=expected))
    padded = evaluator.score(
        CaseContext.build(actual_output=f"{expected} Our branches open at 9am on Saturdays.", expected_output=expected)
    )
    assert faithful == {"mean_answer_similarity": 1.0, "min_answer_similarity": 1.0}
    # two sentences match themselves exactly, the third is the minimum: mean = (1 + 1 + min) / 3
    assert padded["min_answer_similarity"] < 0.2
    assert padded["mean_answer_similarity"] == pytest.approx((2 + padded["min_answer_similarity"]) / 3, abs=1e-6)
