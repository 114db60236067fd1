"""Character-level perturbators: exact counts, real QWERTY neighbours, only y/z for the QWERTZ slip, OCR
confusions from the table, and protected spans left alone."""

import random

import pytest
from assay.perturbators import get_perturbator
from assay.perturbators._characters import QWERTY_NEIGHBOURS
from assay.perturbators._text import change_count, editable_letters, protected_spans
from assay.perturbators.random_ocr import OCR_CONFUSIONS, ocr_sites

TEXT = "how do i report a stolen card quickly and block every payment made with it since monday"


def perturb(perturbator_id: str, text: str, intensity: str = "high", seed: int = 0) -> str:
    return get_perturbator(perturbator_id).perturb(text, intensity=intensity, rng=random.Random(seed))


def changed_positions(before: str, after: str) -> list[int]:
    assert len(before) == len(after)
    return [index for index, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]


def test_change_count_rounds_keeps_one_and_caps() -> None:
    assert [change_count(0.06, n) for n in (0, 1, 10, 50, 100)] == [0, 1, 1, 3, 6]
    assert change_count(1.0, 4) == 4 and change_count(0.12, 71) == 9


def test_protected_spans_cover_figures_urls_emails_and_placeholders() -> None:
    text = "Mail help@bank.co.uk or see https://bank.example/x about £20,000 for {name} in 2024."
    assert [text[start:end] for start, end in protected_spans(text)] == [
        "help@bank.co.uk",
        "https://bank.example/x",
        "£20,000",
        "{name}",
        "2024.",
    ]
    assert all(text[index].isalpha() for index in editable_letters(text))
    assert text.index("h", text.index("help")) not in editable_letters(text)


def test_qwerty_neighbours_are_symmetric_keyboard_neighbours() -> None:
    assert set(QWERTY_NEIGHBOURS) == set("abcdefghijklmnopqrstuvwxyz")
    assert set(QWERTY_NEIGHBOURS["g"]) == set("tyfhvb") and set(QWERTY_NEIGHBOURS["p"]) == set("ol")
    for key, neighbours in QWERTY_NEIGHBOURS.items():
        assert all(key in QWERTY_NEIGHBOURS[other] for other in neighbours), key


@pytest.mark.parametrize("seed", range(5))
def test_keyboard_typos_replace_letters_with_their_neighbours(seed: int) -> None:
    upper = TEXT.upper()
    for text in (TEXT, upper):
        after = perturb("random_keyboard_typos", text, seed=seed)
        positions = changed_positions(text, after)
        assert len(positions) == change_count(0.12, len(editable_letters(text))) == 9
        for index in positions:
            assert after[index].lower() in QWERTY_NEIGHBOURS[text[index].lower()]
            assert after[index].isupper() == text[index].isupper()


def test_random_replacement_changes_exactly_the_rate_in_the_same_case() -> None:
    text = "Your Card Is Blocked"
    after = perturb("random_replacement", text, "high", 4)
    positions = changed_positions(text, after)
    assert len(positions) == change_count(0.12, 17) == 2
    assert all(after[index].isalpha() and after[index].isupper() == text[index].isupper() for index in positions)


def test_random_delete_masks_letters_with_x() -> None:
    for intensity, expected in (("low", 2), ("medium", 4), ("high", 9)):
        after = perturb("random_delete", TEXT, intensity, 2)
        positions = changed_positions(TEXT, after)
        assert len(positions) == expected and {after[index] for index in positions} == {"X"}


def test_random_insert_adds_letters_and_keeps_the_rest_in_order() -> None:
    after = perturb("random_insert", TEXT, "medium", 5)
    assert len(after) == len(TEXT) + 4
    remaining = iter(after)
    assert all(char in remaining for char in TEXT)  # TEXT is a subsequence of the result


def test_qwerty_swaps_every_y_and_z_at_high_intensity_and_nothing_else() -> None:
    assert perturb("qwerty", "Lazy Yak zone, y2k code") == "Layz Zak yone, y2k code"
    text = "yyyy yyyy zzzz zzzz"
    after = perturb("qwerty", text, "medium", 1)
    positions = changed_positions(text, after)
    assert len(positions) == 8 and all({text[index], after[index]} == {"y", "z"} for index in positions)
    assert perturb("qwerty", "No such letters here.") == "No such letters here."


def test_ocr_sites_follow_the_confusion_table_outside_figures() -> None:
    assert ocr_sites("burn 10") == [(1, "u"), (2, "rn")]
    assert ocr_sites("4O cl") == [(3, "cl"), (3, "c"), (4, "l")]
    assert perturb("random_ocr", "rn") == "m"
    assert perturb("random_ocr", "code 4O") != "code 4O" and perturb("random_ocr", "code 4O").endswith(" 4O")


@pytest.mark.parametrize("seed", range(5))
def test_ocr_replacements_come_from_the_table(seed: int) -> None:
    text = "Modern clients will learn how illegal OCR scans go"
    after = perturb("random_ocr", text, "high", seed)
    readings = {reading for options in OCR_CONFUSIONS.values() for reading in options}
    assert after != text
    # Walk both strings: an unchanged stretch matches, a changed one is a printed form read as its confusion.
    i = j = 0
    while i < len(text):
        if text[i] == after[j]:
            i, j = i + 1, j + 1
            continue
        match = next(
            (printed, reading)
            for printed, options in OCR_CONFUSIONS.items()
            for reading in options
            if text.startswith(printed, i) and after.startswith(reading, j)
        )
        assert match[1] in readings
        i, j = i + len(match[0]), j + len(match[1])
    assert j == len(after)
