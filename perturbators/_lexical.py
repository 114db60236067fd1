"""Shared machinery of the word-list perturbators (synonyms, antonyms): only words found in the list change,
names are left alone, and the replacement takes the case of the word it replaces."""

import random
import re
from abc import abstractmethod
from collections.abc import Mapping

from assay.perturbators._text import change_count, editable_words, looks_like_name, match_case, replace_spans
from assay.perturbators.base import Intensity, Perturbator

LEXICAL_RATES: Mapping[Intensity, float] = {"low": 0.25, "medium": 0.5, "high": 1.0}
LEXICAL_UNIT = "share of the words found in the word list (at least one when any is found)"
_ARTICLE_BEFORE = re.compile(r"\b(an?)(\s+)$", re.IGNORECASE)


def _article_edit(text: str, start: int, replacement: str) -> list[tuple[int, int, str]]:
    """The edit that keeps "a"/"an" before ``start`` agreeing with ``replacement`` ("an international" ->
    "a domestic"); none when no article precedes or it already agrees."""
    article = _ARTICLE_BEFORE.search(text, 0, start)
    if article is None:
        return []
    wanted = "an" if replacement[:1].lower() in "aeiou" else "a"
    if article.group(1).lower() == wanted:
        return []
    return [(article.start(1), article.end(1), match_case(article.group(1), wanted))]


class LexiconPerturbator(Perturbator):
    """Replaces a share of the listed words with one of their listed alternatives."""

    amounts = LEXICAL_RATES
    amount_unit = LEXICAL_UNIT

    @abstractmethod
    def lexicon(self) -> Mapping[str, tuple[str, ...]]:
        """Lower-case word -> alternatives; the subclass's word list."""

    def replaceable(self, text: str) -> list[re.Match[str]]:
        """Listed words that are not names (mid-sentence capitals, acronyms) or inside protected spans."""
        table = self.lexicon()
        return [
            match
            for match in editable_words(text)
            if match.group().lower() in table and not looks_like_name(text, match)
        ]

    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        table = self.lexicon()
        words = self.replaceable(text)
        chosen = sorted(rng.sample(words, change_count(amount, len(words))), key=lambda match: match.start())
        edits = []
        for match in chosen:
            replacement = match_case(match.group(), rng.choice(table[match.group().lower()]))
            edits += [*_article_edit(text, match.start(), replacement), (match.start(), match.end(), replacement)]
        return replace_spans(text, edits)
