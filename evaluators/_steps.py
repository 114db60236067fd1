"""Steps of a procedure: extraction by regular expressions and alignment by dynamic programming.

Extraction takes every enumeration the text holds: lines led by "1.", "1)", "(1)", "Step 1:", "a)" or a
bullet; numbered steps run inline ("To close: 1. Log in. 2. Tap Close.") when their numbers follow on; and, in
prose without any list, sentences that open with a sequence word (First, Next, Then, Finally...). An indented
unmarked line continues the step above it.

Alignment is the edit distance between the reference steps and the answer's steps, where a substitution is
free when the two steps mean the same (cosine similarity at or above a threshold) and costs one edit (a
mismatch) otherwise. Among alignments with the fewest edits the one pairing the most similar steps wins, so a
swapped pair of steps reads as a deletion and an insertion around a match rather than two mismatches.
"""

from dataclasses import dataclass

import numpy as np
import regex

from assay.embeddings import split_sentences
from assay.models.evaluation import on_good_side

MAX_STEPS = 200

_LINE_MARKER = regex.compile(
    r"^\s*(?:\#{1,6}\s+)?(?:[*_]{1,2})?"
    r"(?:(?P<ordinal>step\s+\d{1,3}\s*[:.)\-–]?|\(?\d{1,3}[.):]|\(?[a-z]\))|(?P<bullet>[-*+•●▪‣◦–]))"
    r"(?:[*_]{1,2})?\s+(?=\S)",
    regex.IGNORECASE,
)
_INLINE_NUMBER = regex.compile(
    r"(?<=[.!?:;]\s+)(?:step\s+(?P<value>\d{1,3})\s*[:.)\-–]?|(?P<value>\d{1,3})[.)])\s+(?=\S)",
    regex.IGNORECASE,
)
_DIGITS = regex.compile(r"\d+")
_SEQUENCE_WORD = regex.compile(
    r"^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|next|then|after\s+that|afterwards|finally|lastly|"
    r"begin\s+by|start\s+by)\b",
    regex.IGNORECASE,
)
_EMPHASIS = regex.compile(r"\*\*|__")


class TooManyStepsError(ValueError):
    """More steps than any procedure has: the text is a catalogue, not a sequence to align."""


def _clean(text: str) -> str:
    return _EMPHASIS.sub("", text).strip()


def _number_of(marker: str) -> int | None:
    digits = _DIGITS.search(marker)
    return int(digits.group()) if digits else None


def _inline_split(body: str, next_number: int, *, led_by_number: bool) -> tuple[str, list[str]]:
    """Split ``body`` at inline step numbers that continue the count from ``next_number``.

    Returns the text before the first inline step and the inline steps. A line not led by a step needs at
    least two inline numbers, so a lone "3. " after a full stop is not taken for a list.
    """
    cuts: list[tuple[int, int]] = []
    for match in _INLINE_NUMBER.finditer(body):
        if int(match.group("value")) == next_number:
            cuts.append((match.start(), match.end()))
            next_number += 1
    if not cuts or (not led_by_number and len(cuts) < 2):
        return body, []
    bounds = [*cuts, (len(body), len(body))]
    inline = [body[end : bounds[index + 1][0]] for index, (_, end) in enumerate(cuts)]
    return body[: cuts[0][0]], inline


def extract_steps(text: str) -> list[str]:
    """The steps ``text`` enumerates, in order; an empty list when it enumerates nothing."""
    steps: list[str] = []
    open_step = False
    for line in text.splitlines():
        if not line.strip():
            open_step = False
            continue
        marker = _LINE_MARKER.match(line)
        if marker is None and open_step and line[0].isspace():
            steps[-1] = f"{steps[-1]} {line.strip()}"
            continue
        body = line[marker.end() :] if marker else line
        number = _number_of(marker.group("ordinal")) if marker and marker.group("ordinal") else None
        lead, inline = _inline_split(body, 1 if number is None else number + 1, led_by_number=number is not None)
        if marker is not None:
            steps.append(lead)
        steps.extend(inline)
        open_step = marker is not None or bool(inline)
    steps = [cleaned for cleaned in map(_clean, steps) if regex.search(r"\w", cleaned)]
    if not steps:
        steps = _prose_steps(text)
    if len(steps) > MAX_STEPS:
        raise TooManyStepsError(f"{len(steps)} steps found, more than the {MAX_STEPS} a procedure may have")
    return steps


def _prose_steps(text: str) -> list[str]:
    """Sentences opening with a sequence word, when there are at least two of them."""
    sentences = [sentence for sentence in split_sentences(text) if _SEQUENCE_WORD.match(sentence)]
    return [_clean(sentence) for sentence in sentences] if len(sentences) >= 2 else []


@dataclass(frozen=True)
class Alignment:
    """Edits that turn the answer's steps into the reference steps."""

    insertions: int
    deletions: int
    mismatches: int

    @property
    def edits(self) -> int:
        return self.insertions + self.deletions + self.mismatches


_DIAGONAL, _DELETE, _INSERT = 0, 1, 2


def align_steps(similarity: np.ndarray, match_threshold: float) -> Alignment:
    """Align reference steps (rows of ``similarity``) with answer steps (columns).

    An insertion is a reference step the answer lacks, a deletion an answer step the reference lacks, a
    mismatch a reference step paired with an answer step below ``match_threshold``.
    """
    rows, columns = similarity.shape
    edits = np.zeros((rows + 1, columns + 1), dtype=np.int64)
    paired_similarity = np.zeros((rows + 1, columns + 1))
    move = np.zeros((rows + 1, columns + 1), dtype=np.int8)
    mismatch = (~on_good_side(similarity, match_threshold, True)).astype(np.int64)  # 1 where a pair is no match
    edits[1:, 0], move[1:, 0] = np.arange(1, rows + 1), _INSERT
    edits[0, 1:], move[0, 1:] = np.arange(1, columns + 1), _DELETE
    for row in range(1, rows + 1):
        for column in range(1, columns + 1):
            pair = float(similarity[row - 1, column - 1])
            diagonal = edits[row - 1, column - 1] + mismatch[row - 1, column - 1]
            candidates = (
                (diagonal, paired_similarity[row - 1, column - 1] + pair),
                (edits[row, column - 1] + 1, paired_similarity[row, column - 1]),
                (edits[row - 1, column] + 1, paired_similarity[row - 1, column]),
            )
            best = min(range(3), key=lambda index: (candidates[index][0], -candidates[index][1], index))
            edits[row, column], paired_similarity[row, column] = candidates[best]
            move[row, column] = best
    insertions = deletions = mismatches = 0
    row, column = rows, columns
    while row or column:
        step = move[row, column]
        if step == _DIAGONAL:
            mismatches += int(mismatch[row - 1, column - 1])
            row, column = row - 1, column - 1
        elif step == _DELETE:
            deletions += 1
            column -= 1
        else:
            insertions += 1
            row -= 1
    return Alignment(insertions=insertions, deletions=deletions, mismatches=mismatches)
