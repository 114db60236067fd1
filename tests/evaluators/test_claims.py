"""An answer as claims: framing, courtesy, questions, statements about the context and citation markers are left
out with their reason; what remains is checked."""

import pytest
from assay.evaluators._claims import split_claims


@pytest.mark.parametrize(
    ("answer", "claims", "left_out"),
    [
        (
            "Based on the provided passages, here is my answer: the store opens at 9 AM [1]. I hope this helps!",
            ["The store opens at 9 AM."],
            [("[1]", "citation marker"), ("Based on the provided passages", "framing"),
             ("Here is my answer", "framing"), ("I hope this helps!", "courtesy")],
        ),
        (
            "According to the documents, the fee is 5 EUR (Passage 1, step 8). The passages do not mention a cap.",
            ["The fee is 5 EUR."],
            [("(Passage 1, step 8)", "citation marker"), ("According to the documents", "framing"),
             ("The passages do not mention a cap.", "says what the context lacks")],
        ),
        (
            "Here are the opening hours:\n- Monday: 9-5\n- Tuesday: closed",
            ["Monday: 9-5", "Tuesday: closed"],
            [("Here are the opening hours:", "a lead-in to what follows")],
        ),
        (
            "Overall, the restaurant is well rated. Would you like its address?",
            ["The restaurant is well rated."],
            [("Overall", "framing"), ("Would you like its address?", "a question to the user")],
        ),
        (
            "Goldendoodles are called designer dogs, do you like them?",
            ["Goldendoodles are called designer dogs."],
            [("do you like them?", "a question to the user")],
        ),
        ("No fee applies to transfers.", ["No fee applies to transfers."], []),
        ("The fee is 5 EUR; there is no cap [2, 3].", ["The fee is 5 EUR", "There is no cap."],
         [("[2, 3]", "citation marker")]),
    ],
)  # fmt: skip
def test_claims_and_what_is_left_out(answer: str, claims: list[str], left_out: list[tuple[str, str]]) -> None:
    split = split_claims(answer)
    assert [claim[:1].upper() + claim[1:] for claim in split.claims] == claims
    assert sorted((item.text, item.reason) for item in split.left_out) == sorted(left_out)


@pytest.mark.parametrize(
    ("answer", "claims", "feelings"),
    [
        ("i love huskies! they are a breed of dog.", ["They are a breed of dog."], ["i love huskies!"]),
        ("Wow! The fee is 5 EUR.", ["The fee is 5 EUR."], ["Wow!"]),
        ("I like the film because Tom Hanks plays in it.", ["I like the film because Tom Hanks plays in it."], []),
        ("Did you know it sold over 5 billion copies?", ["It sold over 5 billion copies."], []),
        ("Yes.", ["Yes."], []),
    ],
)
def test_short_feelings_are_not_claims_but_claims_inside_them_are(
    answer: str, claims: list[str], feelings: list[str]
) -> None:
    split = split_claims(answer)
    assert [claim[:1].upper() + claim[1:] for claim in split.claims] == claims
    assert [item.text for item in split.left_out if item.reason == "a feeling or reaction, not a fact"] == feelings


def test_an_answer_of_framing_only_has_no_claim() -> None:
    split = split_claims("Based on the passages, here is what I found: I hope this helps! Anything else?")
    assert split.claims == ()
    assert {item.reason for item in split.left_out} == {"framing", "courtesy", "a question to the user"}
