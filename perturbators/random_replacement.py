"""Random character replacement (seed 002 'random_replacement', the default character perturbation)."""

import random

from assay.perturbators._characters import CharacterPerturbator, in_case_of, random_letter
from assay.perturbators.registry import register


@register
class RandomReplacement(CharacterPerturbator):
    id = "random_replacement"
    display_name = "Random character replacement"
    description = (
        "Replaces a share of the letters with other random letters (same case), as careless typing or a "
        "noisy channel would. Numbers, URLs, e-mail addresses and placeholders are kept intact."
    )

    def edit(self, char: str, following: str, rng: random.Random) -> str:
        return in_case_of(char, random_letter(rng, unlike=char))
