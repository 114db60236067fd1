"""Random character deletion (seed 002 'random_delete'): deleted letters are replaced with "X", as the
seed specifies, so the prompt keeps its length and the loss stays visible to a reviewer."""

import random

from assay.perturbators._characters import CharacterPerturbator
from assay.perturbators.registry import register

DELETION_MARK = "X"


@register
class RandomDelete(CharacterPerturbator):
    id = "random_delete"
    display_name = "Random character deletion"
    description = (
        "Deletes a share of the letters and replaces each with 'X', like characters lost in transmission or "
        "scanning. Numbers, URLs, e-mail addresses and placeholders are kept intact."
    )

    def edit(self, char: str, following: str, rng: random.Random) -> str:
        return DELETION_MARK
