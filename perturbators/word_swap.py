"""Word swap (seed 002): adjacent words trade places, as in hurried typing or non-native word order."""

import itertools
import random
import re

from assay.perturbators._text import editable_words, replace_spans, starts_sentence
from assay.perturbators.base import Perturbator
from assay.perturbators.registry import register


def swappable_pairs(text: str) -> list[tuple[re.Match[str], re.Match[str]]]:
    """Neighbouring words separated only by white space (punctuation stays where it is, so a swap never
    carries a question mark into the middle of the sentence)."""
    words = editable_words(text)
    return [(left, right) for left, right in itertools.pairwise(words) if not text[left.end() : right.start()].strip()]


def _recased(text: str, left: re.Match[str], right: re.Match[str]) -> tuple[str, str]:
    """The two words for their new places: at a sentence start the capital stays at the front ("What is"
    becomes "Is what"); "I", names and acronyms keep their capitals wherever they go."""
    first, second = left.group(), right.group()
    if not starts_sentence(text, left.start()) or not first[:1].isupper():
        return second, first
    plain_first = first != "I" and first[1:].islower()
    return second[:1].upper() + second[1:], first.lower() if plain_first else first


@register
class WordSwap(Perturbator):
    id = "word_swap"
    display_name = "Word swap"
    description = (
        "Swaps neighbouring words ('What is the fee' becomes 'What the is fee'); a sentence-opening capital "
        "stays at the front. Words with digits, URLs, e-mail addresses and placeholders do not move."
    )
    kind = "input_variation"
    amounts = {"low": 0.1, "medium": 0.2, "high": 0.4}
    amount_unit = "share of the words that move (two per swap; swaps never overlap)"

    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        pairs = swappable_pairs(text)
        wanted = max(1, round(amount * len(editable_words(text)) / 2))
        rng.shuffle(pairs)
        used: set[int] = set()
        edits = []
        for left, right in pairs:
            if len(edits) == 2 * wanted:
                break
            if left.start() in used or right.start() in used:
                continue
            used |= {left.start(), right.start()}
            new_left, new_right = _recased(text, left, right)
            edits += [(left.start(), left.end(), new_left), (right.start(), right.end(), new_right)]
        return replace_spans(text, edits)
