"""Synonym perturbation (seed 002): words replaced with synonyms from an offline list."""

from collections.abc import Mapping

from assay.perturbators._lexical import LexiconPerturbator
from assay.perturbators.data.synonyms import SYNONYMS
from assay.perturbators.registry import register


@register
class SynonymPerturbation(LexiconPerturbator):
    id = "synonym"
    display_name = "Synonym perturbation"
    description = (
        "Replaces words with synonyms ('fee' with 'charge', 'get' with 'receive') from an offline list of "
        f"{len(SYNONYMS)} common English and banking words, keeping capitalisation. The meaning stays, so "
        "a robust system answers the same. Product and other names (capitalised inside a sentence) and "
        "numbers are left alone."
    )
    kind = "input_variation"

    def lexicon(self) -> Mapping[str, tuple[str, ...]]:
        return SYNONYMS
