"""QWERTY perturbation (seed 002): 'y' and 'z' swapped, as typing on a QWERTZ (German) layout does."""

import random

from assay.perturbators._characters import CharacterPerturbator
from assay.perturbators._text import editable_letters
from assay.perturbators.registry import register

_SWAP = str.maketrans("yzYZ", "zyZY")


@register
class QwertyPerturbation(CharacterPerturbator):
    id = "qwerty"
    display_name = "QWERTY perturbation"
    description = (
        "Replaces 'y' with 'z' and 'z' with 'y' (case kept), the slip of someone used to a QWERTZ keyboard. "
        "Only y and z change; a prompt without them is left unchanged. Numbers, URLs, e-mail addresses and "
        "placeholders are kept intact."
    )
    amounts = {"low": 0.25, "medium": 0.5, "high": 1.0}
    amount_unit = "share of the letters y and z outside numbers, URLs, e-mail addresses and {placeholders}"

    def candidates(self, text: str) -> list[int]:
        return [index for index in editable_letters(text) if text[index] in "yzYZ"]

    def edit(self, char: str, following: str, rng: random.Random) -> str:
        return char.translate(_SWAP)
