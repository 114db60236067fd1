"""Text helpers shared by perturbators: which parts of a prompt may change, and how much.

Spans that carry exact meaning are protected from every character- and word-level perturbator: a token
with a digit in it (amounts, rates, dates, account numbers: a typo in "£20,000" asks a different question,
it does not test robustness), URLs, e-mail addresses and ``{placeholders}`` filled from test-case variables.
"""

import re
from collections.abc import Iterable

_PROTECTED = re.compile(
    r"https?://\S+|www\.\S+"  # URLs
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses
    r"|\{[^{}]*\}"  # template placeholders
    r"|\S*\d\S*"  # any token with a digit: amounts, percentages, dates, codes
)
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.?!:;]\s*$")


def protected_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every protected span, in order."""
    return [match.span() for match in _PROTECTED.finditer(text)]


def _protected_mask(text: str) -> list[bool]:
    mask = [False] * len(text)
    for start, end in protected_spans(text):
        mask[start:end] = [True] * (end - start)
    return mask


def editable_letters(text: str) -> list[int]:
    """Indices of the letters outside protected spans: the characters a typo-style perturbator may touch."""
    mask = _protected_mask(text)
    return [index for index, char in enumerate(text) if char.isalpha() and not mask[index]]


def editable_words(text: str) -> list[re.Match[str]]:
    """Word matches (letters, inner apostrophes and hyphens) lying wholly outside protected spans."""
    mask = _protected_mask(text)
    return [match for match in WORD.finditer(text) if not any(mask[match.start() : match.end()])]


def change_count(amount: float, available: int) -> int:
    """How many of ``available`` places a rate of ``amount`` changes: rounded, at least one when there is
    any place at all (so even "low" visibly perturbs a short prompt), never more than there are."""
    if available <= 0:
        return 0
    return min(available, max(1, round(amount * available)))


def starts_sentence(text: str, index: int) -> bool:
    """Whether the word at ``index`` opens a sentence (text start, or after . ? ! : ;)."""
    return not text[:index].strip() or bool(_SENTENCE_END.search(text[:index]))


def is_shouting(text: str) -> bool:
    """Whether most letters are capitals: then capitals mark nothing, and no word can be told to be a name."""
    letters = [char for char in text if char.isalpha()]
    return bool(letters) and sum(char.isupper() for char in letters) > 0.6 * len(letters)


def looks_like_name(text: str, match: re.Match[str]) -> bool:
    """A capitalised word inside a sentence ("Easy Access Saver", "Harbourline") or an acronym ("ISA"): a name
    that word-level perturbators must leave alone, since swapping a product name is not a rewording. In an
    all-capitals prompt no word counts as a name."""
    word = match.group()
    if is_shouting(text):
        return False
    if len(word) > 1 and word.isupper():
        return True
    return word[0].isupper() and not starts_sentence(text, match.start())


def match_case(source: str, replacement: str) -> str:
    """``replacement`` written in the case of ``source``: UPPER, Capitalised or as given."""
    if len(source) > 1 and source.isupper():
        return replacement.upper()
    if source[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def replace_spans(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each non-overlapping (start, end, new text) edit applied."""
    pieces, cursor = [], 0
    for start, end, new in sorted(edits):
        pieces += [text[cursor:start], new]
        cursor = end
    return "".join([*pieces, text[cursor:]])
