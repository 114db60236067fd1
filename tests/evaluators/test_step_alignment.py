import math
from collections.abc import Sequence

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, Unscored, build_evaluator
from assay.evaluators._steps import MAX_STEPS, Alignment, TooManyStepsError, align_steps, extract_steps

from assay.embeddings import EmbeddingEngine


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("1. Log in.\n2. Tap Close.\n3) Confirm.", ["Log in.", "Tap Close.", "Confirm."]),
        ("(1) Log in\n(2) Tap Close", ["Log in", "Tap Close"]),
        ("Step 1: Log in.\nStep 2 - Tap Close\nstep 3 Confirm", ["Log in.", "Tap Close", "Confirm"]),
        ("- Log in\n* Tap Close\n• Confirm", ["Log in", "Tap Close", "Confirm"]),
        ("a) Log in\nb) Tap Close", ["Log in", "Tap Close"]),
        ("**1.** **Log in**\n### 2. Tap Close", ["Log in", "Tap Close"]),
        ("1. Log in. 2. Tap Close. 3. Confirm.", ["Log in.", "Tap Close.", "Confirm."]),
        ("To close it: 1. Log in. 2. Tap Close.", ["Log in.", "Tap Close."]),
        ("Step 1: Log in. Step 2: Tap Close.", ["Log in.", "Tap Close."]),
        ("1. Log in and\n   choose the account.\n2. Tap Close.", ["Log in and choose the account.", "Tap Close."]),
        ("## Steps\n\n1. Log in.\nThat is all.\n2. Tap Close.", ["Log in.", "Tap Close."]),
        (
            "First, log in. Then tap Close. Finally, confirm.",
            ["First, log in.", "Then tap Close.", "Finally, confirm."],
        ),
    ],
)
def test_enumerations_in_every_supported_form_are_extracted(text: str, steps: list[str]) -> None:
    assert extract_steps(text) == steps


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The Easy Access Saver pays 3.25% AER.\n10:30 is when we open.",
        "It costs £2. 3. That is a stray number.",
        "Log in. Then you are done.",
        "* * *\n---",
    ],
)
def test_prose_decimals_times_and_rules_are_not_steps(text: str) -> None:
    assert extract_steps(text) == []


def test_a_catalogue_longer_than_any_procedure_is_refused() -> None:
    assert len(extract_steps("\n".join(f"- item {index}" for index in range(MAX_STEPS)))) == MAX_STEPS
    with pytest.raises(TooManyStepsError, match=f"201 steps found, more than the {MAX_STEPS}"):
        extract_steps("\n".join(f"- item {index}" for index in range(MAX_STEPS + 1)))


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [
        (np.eye(3), Alignment(insertions=0, deletions=0, mismatches=0)),
        (np.array([[1, 0], [0, 0], [0, 1]]), Alignment(insertions=1, deletions=0, mismatches=0)),
        (np.array([[1, 0, 0], [0, 0, 1]]), Alignment(insertions=0, deletions=1, mismatches=0)),
        (np.array([[1, 0], [0, 0.3]]), Alignment(insertions=0, deletions=0, mismatches=1)),
        (np.array([[1, 0], [0, 0.6]]), Alignment(insertions=0, deletions=0, mismatches=0)),
        (np.zeros((3, 0)), Alignment(insertions=3, deletions=0, mismatches=0)),
        (np.zeros((0, 2)), Alignment(insertions=0, deletions=2, mismatches=0)),
        # a swap: a deletion and an insertion around a match beat two mismatches of the same cost
        (np.array([[0, 1], [1, 0]]), Alignment(insertions=1, deletions=1, mismatches=0)),
        # the first step missing and the last one wrong
        (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0.2]]), Alignment(insertions=1, deletions=0, mismatches=1)),
    ],
)
def test_alignment_counts_the_fewest_edits(similarity: np.ndarray, expected: Alignment) -> None:
    alignment = align_steps(similarity.astype(np.float32), match_threshold=0.6)
    assert alignment == expected
    assert alignment.edits == expected.insertions + expected.deletions + expected.mismatches


class VectorTable:
    """A fake embedder with hand-picked unit vectors, so every step similarity is exact."""

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = {text: np.asarray(vector, dtype=np.float32) for text, vector in vectors.items()}
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self.vectors[text] for text in texts])


VECTORS = {
    "Alpha": (1, 0, 0, 0, 0),
    "Beta": (0, 1, 0, 0, 0),
    "Gamma": (0, 0, 1, 0, 0),
    "Delta": (0, 0, 0, 1, 0),
    "Alpha again": (0.8, 0, 0, 0, 0.6),
    "Epsilon": (0, 0, 0, 0.5, math.sqrt(0.75)),
}
CONTEXT = ["Intro.\n1. Alpha\n2. Beta", "3. Gamma\n4. Delta"]


def evaluator_with(table: VectorTable, **parameters: float):  # type: ignore[no-untyped-def]
    return build_evaluator("step_alignment", Services(embedder_factory=lambda: table), **parameters)


def test_steps_from_every_chunk_are_aligned_with_the_answer_steps() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(retrieved_context=CONTEXT, actual_output="Do this:\n- Alpha again\n- Gamma\n- Epsilon")
    # Alpha ~ Alpha again (0.8) and Gamma match, Beta is left out, Delta vs Epsilon (0.5) is a mismatch
    assert evaluator.score(case) == {
        "edits": 2.0,
        "insertions": 1.0,
        "deletions": 0.0,
        "mismatches": 1.0,
        "retrieved_context_steps": 4.0,
        "actual_answer_steps": 3.0,
    }


def test_the_step_similarity_threshold_decides_what_counts_as_the_same_step() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS), step_similarity_threshold=0.9)
    case = CaseContext.build(retrieved_context=CONTEXT, actual_output="1. Alpha again\n2. Beta\n3. Gamma\n4. Delta")
    assert evaluator.score(case)["mismatches"] == 1.0
    assert evaluator_with(VectorTable(VECTORS)).score(case)["edits"] == 0.0


def test_an_answer_without_steps_misses_every_step() -> None:
    table = VectorTable(VECTORS)
    case = CaseContext.build(retrieved_context=CONTEXT, actual_output="Just call us.")
    assert evaluator_with(table).score(case) == {
        "edits": 4.0,
        "insertions": 4.0,
        "deletions": 0.0,
        "mismatches": 0.0,
        "retrieved_context_steps": 4.0,
        "actual_answer_steps": 0.0,
    }
    assert table.calls == []


def test_a_context_without_steps_is_unscored_with_the_counts() -> None:
    evaluator = evaluator_with(VectorTable(VECTORS))
    case = CaseContext.build(test_case_key="q7", retrieved_context=["Call us."], actual_output="1. Alpha\n2. Beta")
    with pytest.raises(Unscored, match=r"test case q7: no steps .* found in the retrieved context") as raised:
        evaluator.score(case)
    assert raised.value.scores == {"retrieved_context_steps": 0.0, "actual_answer_steps": 2.0}


def test_too_many_steps_leave_the_case_unscored() -> None:
    catalogue = "\n".join(f"- item {index}" for index in range(MAX_STEPS + 1))
    evaluator = evaluator_with(VectorTable(VECTORS))
    evaluator.prepare([CaseContext.build(retrieved_context=[catalogue], actual_output="- Alpha")])
    with pytest.raises(Unscored, match="test case case: retrieved context: 201 steps found"):
        evaluator.score(CaseContext.build(retrieved_context=[catalogue], actual_output="- Alpha"))


def test_prepare_embeds_every_distinct_step_of_every_case_in_one_call() -> None:
    table = VectorTable(VECTORS)
    evaluator_with(table).prepare(
        [
            CaseContext.build(retrieved_context=CONTEXT, actual_output="- Alpha again\n- Epsilon"),
            CaseContext.build(retrieved_context=["1. Alpha\n2. Gamma"], actual_output="- Beta"),
        ]
    )
    assert table.calls == [["Alpha", "Beta", "Gamma", "Delta", "Alpha again", "Epsilon"]]


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


def test_paraphrased_steps_align_and_a_swap_costs_two_edits_with_minilm(services: Services) -> None:
    evaluator = build_evaluator("step_alignment", services)
    context = [
        "1. Log in to the Harbourline app and choose the account you want to close.\n"
        "2. Tell us where to send any remaining balance.\n"
        "3. Destroy your debit card by cutting through the chip."
    ]
    paraphrase = (
        "Step 1: Open the Harbourline app and pick the account to close.\n"
        "Step 2: Say where the remaining balance should be sent.\n"
        "Step 3: Cut your debit card through the chip."
    )
    swapped = (
        "1. Open the Harbourline app and pick the account to close.\n"
        "2. Cut your debit card through the chip.\n"
        "3. Say where the remaining balance should be sent."
    )
    assert evaluator.score(CaseContext.build(retrieved_context=context, actual_output=paraphrase))["edits"] == 0.0
    scores = evaluator.score(CaseContext.build(retrieved_context=context, actual_output=swapped))
    assert (scores["edits"], scores["insertions"], scores["deletions"], scores["mismatches"]) == (2.0, 1.0, 1.0, 0.0)
