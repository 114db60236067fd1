"""Word-level perturbators: commas between words, adjacent swaps, and list-based synonyms and antonyms that
keep case and leave names and figures alone."""

import random

import pytest
from assay.perturbators import get_perturbator
from assay.perturbators.antonym import ANTONYMS
from assay.perturbators.comma import comma_sites
from assay.perturbators.data.antonyms import ANTONYM_PAIRS
from assay.perturbators.data.synonyms import SYNONYMS
from assay.perturbators.word_swap import swappable_pairs


def perturb(perturbator_id: str, text: str, intensity: str = "high", seed: int = 0) -> str:
    return get_perturbator(perturbator_id).perturb(text, intensity=intensity, rng=random.Random(seed))


def test_commas_go_only_between_two_words() -> None:
    assert comma_sites("Hi, is it £5 now?") == [6]
    assert perturb("comma", "Hi, is it £5 now?", "low") == "Hi, is, it £5 now?"
    assert perturb("comma", "Done.") == "Done."


@pytest.mark.parametrize("seed", range(5))
def test_comma_count_follows_the_rate_and_removing_them_restores_the_text(seed: int) -> None:
    text = "what is the monthly fee on the business account after the free banking period ends"
    after = perturb("comma", text, "medium", seed)
    assert after.count(",") == round(0.2 * 13) == 3
    assert after.replace(",", "") == text and ", " in after and not after.endswith(",")


def test_word_swap_keeps_the_sentence_capital_at_the_front() -> None:
    assert perturb("word_swap", "What is") == "Is what"
    assert perturb("word_swap", "I paid") == "Paid I"
    assert {perturb("word_swap", "Open the app.", "low", seed) for seed in range(10)} == {
        "The open app.",
        "Open app the.",
    }


def test_word_swap_moves_neither_punctuation_nor_figures() -> None:
    assert [(a.group(), b.group()) for a, b in swappable_pairs("Is it £5, or more?")] == [("Is", "it"), ("or", "more")]
    for seed in range(10):
        after = perturb("word_swap", "Is it £5, or more?", "high", seed)
        assert after in {"It is £5, more or?", "It is £5, or more?", "Is it £5, more or?"}


def test_word_swap_count_grows_with_intensity() -> None:
    text = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    moved = {
        intensity: sum(
            a != b for a, b in zip(text.split(), perturb("word_swap", text, intensity, 1).split(), strict=True)
        )
        for intensity in ("low", "medium", "high")
    }
    assert moved == {"low": 2, "medium": 4, "high": 6}


def test_the_word_lists_are_clean_and_a_few_hundred_words_long() -> None:
    assert len(set(SYNONYMS) | set(ANTONYMS)) >= 400
    for table in (SYNONYMS, ANTONYMS):
        for word, alternatives in table.items():
            assert word == word.lower() and " " not in word and alternatives
            assert word not in alternatives
    for left, right in ANTONYM_PAIRS:
        assert right in ANTONYMS[left] and left in ANTONYMS[right]


def test_synonyms_replace_listed_words_in_their_case() -> None:
    assert perturb("synonym", "Fee and fees for a customer") == "Charge and charges for a client"
    assert perturb("synonym", "FEE AND FEES FOR A CUSTOMER") == "CHARGE AND CHARGES FOR A CLIENT"
    assert perturb("synonym", "What is the fee?", "low") == "What is the charge?"


def test_synonyms_leave_names_figures_and_unlisted_words_alone() -> None:
    text = "What does the Easy Access Saver pay on £20,000 of savings?"
    assert perturb("synonym", text) == text  # "Easy" is a name here; "easy" alone would change
    assert perturb("synonym", "Is it easy?") == "Is it simple?"
    assert perturb("synonym", "Xyzzy plugh.") == "Xyzzy plugh."


def test_synonym_low_intensity_replaces_a_quarter_of_the_listed_words() -> None:
    text = "get money fast and keep the fee small"  # get, money, fast, keep, fee, small
    after = perturb("synonym", text, "low", 2)
    changed = [a for a, b in zip(text.split(), after.split(), strict=False) if a != b]
    assert len(changed) == round(0.25 * 6) == 2


def test_antonyms_flip_meaning_and_keep_case() -> None:
    assert perturb("antonym", "What is the maximum fee?") == "What is the minimum fee?"
    assert perturb("antonym", "Fixed or variable?") == "Variable or fixed?"
    assert perturb("antonym", "CAN I USE MY DEBIT CARD?") == "CAN I USE MY CREDIT CARD?"
    assert perturb("antonym", "Can I open a NEW ISA?") == "Can I close a NEW ISA?"  # acronyms stay
    assert perturb("antonym", "Who runs Harbourline Bank?") == "Who runs Harbourline Bank?"


def test_the_article_agrees_with_the_replacement() -> None:
    assert perturb("antonym", "Send an international payment") == "Receive a domestic payment"
    assert (
        perturb("antonym", "Is it a domestic or AN international fee?") == "Is it an international or A domestic fee?"
    )
    assert perturb("synonym", "Get an error") == "Receive a mistake"
