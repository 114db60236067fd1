"""One conformance suite over every registered perturbator (after scikit-learn's estimator checks); the rules
ship in ``assay.testing.conformance.perturbators`` for plugins written elsewhere."""

import pytest
from assay.perturbators import get_perturbator, perturbator_ids

from assay.testing.conformance import Check, parametrize_with_checks
from assay.testing.conformance.perturbators import perturbator_checks

IDS = perturbator_ids()


def test_the_catalogue_has_the_seed_perturbators() -> None:
    assert set(IDS) == {
        "random_replacement",
        "random_keyboard_typos",
        "random_insert",
        "random_delete",
        "random_ocr",
        "qwerty",
        "comma",
        "word_swap",
        "synonym",
        "antonym",
        "contextual_misinformation",
        "prompt_injection",
        "base64",
        "base16",
    }
    assert get_perturbator("random_OCR").id == "random_ocr"  # the seed's spelling finds it


def test_an_unknown_id_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown perturbator 'typo'; known perturbators: antonym, base16"):
        get_perturbator("typo")


@parametrize_with_checks(perturbator_checks())
def test_every_perturbator_conforms(check: Check) -> None:
    check()
