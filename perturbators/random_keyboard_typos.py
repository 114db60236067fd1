"""Keyboard typos (seed 002 'random_keyboard_typos'): letters replaced by a neighbouring QWERTY key."""

import random

from assay.perturbators._characters import QWERTY_NEIGHBOURS, CharacterPerturbator, in_case_of
from assay.perturbators._text import editable_letters
from assay.perturbators.registry import register


@register
class RandomKeyboardTypos(CharacterPerturbator):
    id = "random_keyboard_typos"
    display_name = "Keyboard typos"
    description = (
        "Replaces a share of the letters with a neighbouring key on a QWERTY keyboard ('a' with 'q', 's' "
        "with 'a'...), keeping the case: the fat-finger typos real users make. Numbers, URLs, e-mail "
        "addresses and placeholders are kept intact."
    )

    def candidates(self, text: str) -> list[int]:
        return [index for index in editable_letters(text) if text[index].lower() in QWERTY_NEIGHBOURS]

    def edit(self, char: str, following: str, rng: random.Random) -> str:
        return in_case_of(char, rng.choice(QWERTY_NEIGHBOURS[char.lower()]))
