"""Shared machinery of the character-level perturbators (seed 002 "Random character perturbation").

The seed's rate "p percentage of characters" is read as a share of the *editable letters*: letters outside
the protected spans of ``perturbators._text`` (numbers, URLs, e-mail addresses, placeholders). Spaces and
punctuation are never picked, so a rate means the same for a terse and a wordy prompt.
"""

import random
import string
from abc import abstractmethod
from collections.abc import Mapping

from assay.perturbators._text import change_count, editable_letters
from assay.perturbators.base import Intensity, Perturbator

CHARACTER_RATES: Mapping[Intensity, float] = {"low": 0.03, "medium": 0.06, "high": 0.12}
CHARACTER_UNIT = "share of the letters outside numbers, URLs, e-mail addresses and {placeholders}"

# Neighbours of each key on a QWERTY keyboard (same row, and the rows above and below as the keys are
# staggered), lower case.
QWERTY_NEIGHBOURS: Mapping[str, str] = {
    "a": "qwsz",
    "b": "ghvn",
    "c": "dfxv",
    "d": "ersfxc",
    "e": "wrsd",
    "f": "rtdgcv",
    "g": "tyfhvb",
    "h": "yugjbn",
    "i": "uojk",
    "j": "uihknm",
    "k": "iojlm",
    "l": "opk",
    "m": "jkn",
    "n": "hjbm",
    "o": "ipkl",
    "p": "ol",
    "q": "wa",
    "r": "etdf",
    "s": "weadzx",
    "t": "ryfg",
    "u": "yihj",
    "v": "fgcb",
    "w": "qeas",
    "x": "sdzc",
    "y": "tugh",
    "z": "asx",
}


def random_letter(rng: random.Random, *, unlike: str = "") -> str:
    """A lower-case ASCII letter other than ``unlike`` (compared without case)."""
    return rng.choice([letter for letter in string.ascii_lowercase if letter != unlike.lower()])


def in_case_of(model: str, letter: str) -> str:
    return letter.upper() if model.isupper() else letter.lower()


class CharacterPerturbator(Perturbator):
    """Picks ``change_count`` editable positions at random and rewrites each with ``edit``."""

    kind = "input_variation"
    amounts = CHARACTER_RATES
    amount_unit = CHARACTER_UNIT

    def candidates(self, text: str) -> list[int]:
        """Positions this perturbator may edit; all editable letters unless a subclass narrows them."""
        return editable_letters(text)

    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        positions = self.candidates(text)
        chosen = sorted(rng.sample(positions, change_count(amount, len(positions))))
        characters = list(text)
        for index in chosen:
            following = text[index + 1 : index + 2]
            characters[index] = self.edit(text[index], following, rng)
        return "".join(characters)

    @abstractmethod
    def edit(self, char: str, following: str, rng: random.Random) -> str:
        """What replaces ``char`` (which ``following`` comes after in the text); may be several characters."""
