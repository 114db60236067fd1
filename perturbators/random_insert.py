"""Random character insertion (seed 002 'random_insert')."""

import random

from assay.perturbators._characters import CharacterPerturbator, in_case_of, random_letter
from assay.perturbators.registry import register


@register
class RandomInsert(CharacterPerturbator):
    id = "random_insert"
    display_name = "Random character insertion"
    description = (
        "Inserts a random letter after a share of the letters (the inserted letter takes the case of the "
        "letter it precedes, so words keep their look). Numbers, URLs, e-mail addresses and placeholders "
        "are kept intact."
    )

    def edit(self, char: str, following: str, rng: random.Random) -> str:
        model = following if following.isalpha() else char
        return char + in_case_of(model, random_letter(rng))
