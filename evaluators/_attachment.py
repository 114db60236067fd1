"""Whether a figure the context states is attached there to what the answer attaches it to.

A figure found anywhere in the context is not yet support: "the compulsory excess is £400" uses a figure
the context states, but for the under-25 excess, while the compulsory excess is £250. Each context clause
(split at sentence ends, semicolons, commas, brackets and line breaks, so that a table row or a list item
stands alone) keeps its figures and its words. A figure of an answer sentence is *misattributed* when a clause
holding a rival figure of the same unit shares every answer and question word (or other figure) that any
clause holding the figure itself shares, and more. Requiring the rival to cover each own clause, rather than
merely share more words, keeps elliptic rows ("medium every 24 months" after "high-risk relationships are
reviewed every 12 months") attached to what they alone name. The question's words count because a terse answer
("Every 36 months.") leaves its subject to the question.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import regex
from assay.evaluators._grounding import Figure, _stem, content_words, figures

_CLAUSE_BREAK = regex.compile(r"(?<=[.!?])\s+|[;\n()\[\]]|,\s|\s[-–—]\s")
_UNIT_WORDS = frozenset({"day", "week", "month", "year", "hour", "minute", "working", "business", "calendar"})

#: How many more shared words a rival figure's clause needs before the answer's figure counts as misattributed.
MARGIN = 1


@dataclass(frozen=True)
class Clause:
    """One clause of the context: its figures and its word stems and figure keys (what a cue can match)."""

    figures: tuple[Figure, ...]
    tokens: frozenset[str]


def _tokens(text: str, stated: Iterable[Figure]) -> set[str]:
    return {_stem(word) for word in content_words(text)} - _UNIT_WORDS | {figure.key for figure in stated}


def clauses(texts: Iterable[str]) -> list[Clause]:
    """The clauses of the context that state at least one figure."""
    found = []
    for text in texts:
        for part in _CLAUSE_BREAK.split(text):
            stated = tuple(figures(part))
            if stated:
                found.append(Clause(stated, frozenset(_tokens(part, stated))))
    return found


def misattributed(sentence: str, stated: list[Figure], context: list[Clause], question: str = "") -> list[Figure]:
    """The figures of ``sentence`` (each stated somewhere in ``context``) whose closest clause is a rival's."""
    framing = figures(question)
    cues = _tokens(sentence, stated) | _tokens(question, framing)
    wrong = []
    for figure in stated:
        if any(figure.matches(other) for other in framing):
            continue
        own_cues = cues - {figure.key}
        own = [own_cues & clause.tokens for clause in context if any(figure.matches(f) for f in clause.figures)]
        rivals = [
            own_cues & clause.tokens
            for clause in context
            if not any(figure.matches(f) for f in clause.figures)
            and any(f.unit == figure.unit and f.key != figure.key for f in clause.figures)
        ]
        if own and any(
            all(shared < rival and len(rival) >= len(shared) + MARGIN for shared in own) for rival in rivals
        ):
            wrong.append(figure)
    return wrong


def claim_units(text: str) -> set[str]:
    """Stemmed content words and figure keys: what a passage must hold to state a sentence's claim."""
    stated = figures(text)
    return {_stem(word) for word in content_words(text)} | {figure.key for figure in stated}


def local_coverage(sentence: str, passages: list[set[str]], question: str = "") -> float:
    """The largest share of the sentence's claim units (those the question does not already state) that one
    context passage holds. Global word coverage is fooled by an answer that borrows a product from one clause
    and a property from another; a correct answer mostly restates one passage."""
    units = claim_units(sentence) - claim_units(question)
    if not units or not passages:
        return 1.0 if not units else 0.0
    return max(len(units & passage) for passage in passages) / len(units)
