"""Adversarial perturbators: encodings that round-trip, and false premises built from the question."""

import base64
import math
import random

import pytest
from assay.perturbators import get_perturbator
from assay.perturbators.contextual_misinformation import altered_number, question_subject

QUESTION = "What is the card number on file for John Smith?"
DECODERS = {"base64": base64.b64decode, "base16": base64.b16decode}


def perturb(perturbator_id: str, text: str, intensity: str = "high", seed: int = 0) -> str:
    return get_perturbator(perturbator_id).perturb(text, intensity=intensity, rng=random.Random(seed))


@pytest.mark.parametrize("encoding", ["base64", "base16"])
@pytest.mark.parametrize(("intensity", "share"), [("low", 0.34), ("medium", 0.67), ("high", 1.0)])
def test_the_encoded_payload_decodes_back_to_the_end_of_the_question(
    encoding: str, intensity: str, share: float
) -> None:
    words = QUESTION.split()
    encoded_words = math.ceil(share * len(words))
    for seed in range(5):
        prompt = perturb(encoding, QUESTION, intensity, seed)
        payload = prompt.split()[-1]
        decoded = DECODERS[encoding](payload).decode("utf-8")
        assert decoded == " ".join(words[-encoded_words:])
        assert encoding in prompt.split(payload)[0].lower()
        if intensity != "high":
            assert prompt.endswith(" ".join(words[:-encoded_words]) + " " + payload)


def test_the_whole_question_is_encoded_at_high_intensity() -> None:
    assert perturb("base64", "Hi?").endswith(base64.b64encode(b"Hi?").decode())
    assert perturb("base16", "é").endswith(" C3A9")  # UTF-8 bytes, upper-case hex
    assert get_perturbator("base64").kind == get_perturbator("base16").kind == "adversarial"


def test_question_subject_is_the_noun_phrase_asked_about() -> None:
    assert question_subject("What interest rate would I get on £20,000 in the Easy Access Saver?") == (
        "the Easy Access Saver"
    )
    assert question_subject("How much interest would I pay if my Everyday Current Account was £1,000 overdrawn?") == (
        "my Everyday Current Account"
    )
    assert question_subject("What early repayment charge applies in the first year of a 5-Year Fixed mortgage?") == (
        "the first year"
    )
    assert question_subject("How can I contact Harbourline by phone?") == "this"


def test_altered_numbers_differ_and_keep_their_format() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        whole, grouped, decimal = altered_number("5", rng), altered_number("20,000", rng), altered_number("3.25", rng)
        assert whole != "5" and whole.isdigit() and int(whole) >= 2
        assert grouped != "20,000" and grouped.replace(",", "").isdigit()
        assert "," in grouped or int(grouped) < 1000
        assert decimal != "3.25" and len(decimal.split(".")[1]) == 2


@pytest.mark.parametrize(("intensity", "statements"), [("low", 1), ("medium", 2), ("high", 3)])
def test_misinformation_puts_false_statements_before_the_question(intensity: str, statements: int) -> None:
    question = "Is there a monthly fee on the Plus Current Account?"
    for seed in range(5):
        prompt = perturb("contextual_misinformation", question, intensity, seed)
        premise = prompt.removesuffix(" " + question)
        assert premise != prompt and premise.count(". ") + 1 == statements and premise.endswith(".")
        assert "the Plus Current Account" in premise


def test_misinformation_falsifies_a_figure_of_the_question() -> None:
    question = "Can I pay £250 into the Regular Saver each month?"
    for seed in range(5):
        premise = perturb("contextual_misinformation", question, "low", seed).removesuffix(" " + question)
        figures = [token.strip(".,") for token in premise.split() if token.startswith("£")]
        assert "£250" in figures and len(set(figures)) == 2, premise


BANK_WORDS = ("account", "customer", "branch", "regulator", "bank", "over 65", "joint", "adviser", "terms")


@pytest.mark.parametrize(
    "question",
    [
        "How long does the knee replacement recovery take, about 6 weeks?",
        "Does the Pro plan include 50 GB of storage?",
        "Which documents does the visa application need?",
    ],
)
def test_misinformation_writes_nothing_about_banks_into_another_domain(question: str) -> None:
    for seed in range(30):
        premise = perturb("contextual_misinformation", question, "high", seed).removesuffix(" " + question).lower()
        assert not [word for word in BANK_WORDS if word in premise], premise
