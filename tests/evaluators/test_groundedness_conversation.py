"""Conversation-level groundedness: a production session's later request judged as a whole, every assistant
turn and the last answer against everything retrieved in the conversation."""

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator

from assay.embeddings import EmbeddingEngine
from assay.models import ConversationTurn

FEES = "Replacing a lost card costs 5 EUR. Replacement cards arrive within five working days."
LIMITS = "The daily cash withdrawal limit is 500 EUR."


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def _case(first_answer: str) -> CaseContext:
    turns = [
        ConversationTurn(role="user", content="How much does a new card cost?"),
        ConversationTurn(role="assistant", content=first_answer, context=[FEES]),
    ]
    return CaseContext.build(
        question="And how much can I withdraw a day?",
        actual_output="The daily cash withdrawal limit is 500 EUR.",
        retrieved_context=[LIMITS],
        turns=turns,
    )


def _groundedness(services: Services, case: CaseContext, scope: str) -> float | None:
    evaluator = build_evaluator("groundedness", services, scope=scope)
    evaluator.prepare([case])
    return evaluator.score(case).scores["groundedness"]


def test_an_earlier_invented_answer_fails_the_conversation_but_not_the_last_answer(services: Services) -> None:
    invented = _case("A new card costs 40 EUR and takes a month.")
    faithful = _case("A replacement card costs 5 EUR.")
    assert _groundedness(services, invented, "answer") == pytest.approx(_groundedness(services, faithful, "answer"))
    assert _groundedness(services, invented, "answer") >= 0.5
    assert _groundedness(services, faithful, "conversation") >= 0.5  # each turn against its own passages
    assert _groundedness(services, invented, "conversation") < 0.5


def test_a_single_turn_case_scores_the_same_in_either_scope(services: Services) -> None:
    case = CaseContext.build(question="Limit?", actual_output="The limit is 500 EUR a day.", retrieved_context=[LIMITS])
    assert _groundedness(services, case, "conversation") == _groundedness(services, case, "answer")


def test_an_unknown_scope_is_refused_naming_the_choices(services: Services) -> None:
    with pytest.raises(ValueError, match="scope 'session' is not one of answer, conversation"):
        build_evaluator("groundedness", services, scope="session")
