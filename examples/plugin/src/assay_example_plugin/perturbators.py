"""Uppercase words: some words of the prompt written in capitals, as typed with caps lock on or to shout.

A robust system answers "What is the FEE for a REPLACEMENT card?" as it answers the plain question. Anything
holding a digit ("£500", "3.25%", "5-year") is left alone, so figures stay exactly as they were."""

import random
import re

from assay.perturbators import Perturbator

_WORD = re.compile(r"[^\W\d_]+")
_TOKEN = re.compile(r"\S+")


def candidate_words(text: str) -> list[re.Match[str]]:
    """The words that would change in capitals, outside any token holding a digit (a figure, a date)."""
    return [
        word
        for token in _TOKEN.finditer(text)
        if not any(character.isdigit() for character in token.group())
        for word in _WORD.finditer(text, token.start(), token.end())
        if not word.group().isupper()
    ]


class UppercaseWords(Perturbator):
    id = "uppercase_words"
    display_name = "Uppercase words"
    description = (
        "Writes some words of the prompt in capitals ('What is the FEE for a REPLACEMENT card?'), as a user "
        "with caps lock on or one who shouts. Only words with lower-case letters change; figures stay as they are."
    )
    kind = "input_variation"
    amounts = {"low": 0.15, "medium": 0.3, "high": 0.6}
    amount_unit = "share of the words with lower-case letters that are written in capitals (at least one)"

    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        words = candidate_words(text)
        if not words:
            return text
        chosen = sorted(rng.sample(words, max(1, round(amount * len(words)))), key=lambda match: match.start())
        pieces, position = [], 0
        for match in chosen:
            pieces += [text[position : match.start()], match.group().upper()]
            position = match.end()
        return "".join([*pieces, text[position:]])
