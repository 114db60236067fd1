"""OCR errors (seed 002 'random_OCR'): letters and letter pairs a text recogniser confuses."""

import random

from assay.perturbators._characters import CHARACTER_RATES, CHARACTER_UNIT
from assay.perturbators._text import change_count, editable_letters, replace_spans
from assay.perturbators.base import Perturbator
from assay.perturbators.registry import register

# What a scanner reads for what is printed. Digits appear only as readings of letters: existing numbers
# are protected, a misread amount would change the question rather than its spelling.
OCR_CONFUSIONS: dict[str, tuple[str, ...]] = {
    "rn": ("m",),
    "m": ("rn",),
    "cl": ("d",),
    "d": ("cl",),
    "vv": ("w",),
    "w": ("vv",),
    "li": ("h",),
    "h": ("li",),
    "l": ("1", "I"),
    "I": ("l", "1"),
    "i": ("l", "1"),
    "O": ("0", "Q"),
    "o": ("0",),
    "S": ("5",),
    "s": ("5",),
    "B": ("8",),
    "Z": ("2",),
    "g": ("9", "q"),
    "e": ("c",),
    "c": ("e",),
    "u": ("v",),
    "a": ("o",),
}


def ocr_sites(text: str) -> list[tuple[int, str]]:
    """(position, printed form) of every place a confusion applies, all of whose letters are editable."""
    editable = set(editable_letters(text))
    return [
        (index, printed)
        for index in sorted(editable)
        for printed in OCR_CONFUSIONS
        if text.startswith(printed, index) and all(i in editable for i in range(index, index + len(printed)))
    ]


@register
class RandomOcr(Perturbator):
    id = "random_ocr"
    display_name = "OCR errors"
    description = (
        "Replaces letters with what optical character recognition commonly misreads them as: 'rn' as 'm' "
        "and back, 'cl' as 'd', 'vv' as 'w', 'l' as '1', 'O' as '0', 'S' as '5', 'e' as 'c'... Existing "
        "numbers, URLs, e-mail addresses and placeholders are kept intact."
    )
    kind = "input_variation"
    amounts = CHARACTER_RATES
    amount_unit = f"{CHARACTER_UNIT}, at most one confusion per letter"

    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        sites = ocr_sites(text)
        wanted = change_count(amount, len(editable_letters(text)))
        rng.shuffle(sites)
        taken: set[int] = set()
        edits = []
        for index, printed in sites:
            if len(edits) == wanted:
                break
            span = set(range(index, index + len(printed)))
            if taken & span:
                continue
            taken |= span
            edits.append((index, index + len(printed), rng.choice(OCR_CONFUSIONS[printed])))
        return replace_spans(text, edits)
