"""Comma perturbation (seed 002): a comma after some words, a common slip in English writing."""

import random
import re

from assay.perturbators._text import change_count, editable_words, replace_spans
from assay.perturbators.base import Perturbator
from assay.perturbators.registry import register

_NEXT_IS_WORD = re.compile(r"\s+[^\W\d_]")


def comma_sites(text: str) -> list[int]:
    """End positions of the words followed by a space and another word: where a stray comma can go
    without doubling existing punctuation or ending the sentence with one."""
    return [match.end() for match in editable_words(text) if _NEXT_IS_WORD.match(text, match.end())]


@register
class CommaPerturbation(Perturbator):
    id = "comma"
    display_name = "Comma perturbation"
    description = (
        "Adds a comma after some words ('What is, the fee for a replacement card?'), mimicking a common "
        "mistake in English writing and typing. Commas go only between two words, never next to existing "
        "punctuation or inside numbers."
    )
    kind = "input_variation"
    amounts = {"low": 0.1, "medium": 0.2, "high": 0.35}
    amount_unit = "share of the gaps between two words that receive a comma"

    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        sites = comma_sites(text)
        chosen = rng.sample(sites, change_count(amount, len(sites)))
        return replace_spans(text, [(site, site, ",") for site in chosen])
