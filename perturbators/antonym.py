"""Antonym perturbation (seed 002): words replaced with their opposites from an offline list."""

from collections.abc import Mapping

from assay.perturbators._lexical import LexiconPerturbator
from assay.perturbators.data.antonyms import antonyms
from assay.perturbators.registry import register

ANTONYMS = antonyms()


@register
class AntonymPerturbation(LexiconPerturbator):
    id = "antonym"
    display_name = "Antonym perturbation"
    description = (
        "Replaces words with their antonyms ('maximum' with 'minimum', 'fixed' with 'variable', 'debit' "
        f"with 'credit') from an offline list of {len(ANTONYMS)} common English and banking words, keeping "
        "capitalisation. The question's meaning changes: a flip shows whether the system notices, rather "
        "than answering the question it expected. Names and numbers are left alone."
    )
    kind = "input_variation"

    def lexicon(self) -> Mapping[str, tuple[str, ...]]:
        return ANTONYMS
