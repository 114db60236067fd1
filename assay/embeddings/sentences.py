"""Sentence splitting that copes with real text, in time linear in its length.

pysbd handles abbreviations ("Dr.", "e.g.", "U.S.") and decimal numbers; on top of it we repair two
failures seen on real documents: a missing space after a full stop ("AER.It rises") is not a boundary
for pysbd, and an abbreviation followed by a lowercase word ("Mon. at 9") is wrongly split.

pysbd is quadratic in the length of a line (each abbreviation it finds rescans the whole line): a 1.1 MB
answer on one line took longer than 600 s. Lines longer than ``BLOCK_CHARS`` are therefore segmented a
block at a time, each block restarting at the last sentence boundary pysbd found in the previous one, so
no boundary is taken from where a block was cut. Shorter lines, i.e. ordinary text, are segmented exactly as
before. On long lines the only differences seen are list numbers that pysbd recognises by looking across the
whole line ("... in year 2. - 5-Year Fixed"): 2 of the 650 sentences of the sample corpus joined into one line.

Callers that split untrusted text should still bound it (``MAX_SPLIT_CHARS``): linear is not free, and the
embedding of ten thousand sentences that follows a split is the larger cost.

Most lines are plain prose, where pysbd's rules have nothing to decide: full stops only after a word, an
amount or a year and never after an abbreviation or a list number, no quotes, brackets only around a
phrase without a full stop. ``_plain_segments`` recognises such a line and cuts it at its stops, which is
what pysbd does with it, in a fortieth of the time; any other line goes to pysbd. The two agree on every
line of the sample corpus, the labelled sets and the bench texts (tests/test_sentences.py checks them).

Splitting costs ~2.6 ms a chunk: at 10,000 cases (40,000 chunks) that was most of a warm run, whose embeddings
all come from the cache. ``use_sentence_store`` therefore keeps splits on disk next to the embedding cache,
keyed by the splitter's version and the text, so a rerun reads them instead of splitting again.
"""

from functools import lru_cache
from pathlib import Path

import regex
from pysbd.lang.english import English

from assay.embeddings.keyed_store import KeyedJsonStore, hashed_key

MAX_SPLIT_CHARS = 200_000
"""The longest text sentence-based evaluators split and embed; longer inputs leave the case unscored."""
BLOCK_CHARS = 5_000
"""Lines longer than this are segmented in blocks of about this size (pysbd is quadratic within one)."""

_ABBREVIATIONS = frozenset(
    word.lower()
    for word in (
        *English.Abbreviation.ABBREVIATIONS,
        *English.Abbreviation.PREPOSITIVE_ABBREVIATIONS,
        *English.Abbreviation.NUMBER_ABBREVIATIONS,
    )
)
_PLAIN_CHARS = regex.compile(r"[\p{Latin}0-9 ,;:%£$€&/+=#*\-–—.!?()'’]*")
_QUOTE_OPENING = regex.compile(r"(?:^|\s)['’]")  # pysbd protects text between quotes; an apostrophe it ignores
_PARENTHESES = regex.compile(r"\(([^()]*)\)")
_STOP = regex.compile(r"[.!?]")
_AMOUNT = regex.compile(r"[£$€]\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?%|\d{1,3}(?:,\d{3})+|\d{3,}")
_AFTER_STOP = regex.compile(r"(?<=[.!?]) +")
_MISSING_SPACE = regex.compile(r"(?<=[\p{L}\d%)\]][.!?])(?=\p{Lu}\p{Ll}+(?:[\s,;:!?]|\.(?:\s|$)|$))")
_STARTS_LOWER = regex.compile(r"^[\p{Ll}]")


@lru_cache(maxsize=1)
def _segmenter():  # type: ignore[no-untyped-def]
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into stripped sentences; blank input gives an empty list."""
    return list(_split_cached(text))


SPLITTER_VERSION = "pysbd-repair-v1"
"""Part of every stored split's key: change it when the splitting rules change, so old splits are not read."""


class SentenceStore(KeyedJsonStore):
    """Sentence splits on disk, keyed by the splitter's version and the text."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, table="splits", value_column="sentences")

    def get_split(self, text: str) -> tuple[str, ...] | None:
        stored = self.get(hashed_key(SPLITTER_VERSION, text))
        return None if stored is None else tuple(stored)

    def put_split(self, text: str, sentences: tuple[str, ...]) -> None:
        self.put(hashed_key(SPLITTER_VERSION, text), list(sentences))


_store: SentenceStore | None = None


def use_sentence_store(folder: Path | None) -> None:
    """Keep this process's splits in ``folder/sentences-v1.sqlite3`` (None: in memory only)."""
    global _store
    if folder is None:
        _store = None
    elif _store is None or _store.path != folder / "sentences-v1.sqlite3":
        _store = SentenceStore(folder / "sentences-v1.sqlite3")


@lru_cache(maxsize=65536)
def _split_cached(text: str) -> tuple[str, ...]:
    """pysbd costs ~2.6 ms a line and the same texts (retrieved chunks, answers) are split by several
    evaluators and for many cases: each distinct text is split once per process, and with a store once."""
    store = _store
    if store is not None and (stored := store.get_split(text)) is not None:
        return stored
    split = _split(text)
    if store is not None:
        store.put_split(text, split)
    return split


def _split(text: str) -> tuple[str, ...]:
    text = text.strip()
    if not text:
        return ()
    repaired = _MISSING_SPACE.sub(" ", text)
    sentences: list[list[str]] = []  # parts joined once at the end: repeated string merging is quadratic
    for line in repaired.splitlines():
        for segment in _segment_line(line):
            segment = segment.strip()
            if not segment:
                continue
            if sentences and _STARTS_LOWER.match(segment):
                sentences[-1].append(segment)
            else:
                sentences.append([segment])
    return tuple(" ".join(parts) for parts in sentences)


def _plain_segments(line: str) -> list[str] | None:
    """The line cut after each stop when it is plain prose (see the module docstring), else None (ask pysbd).

    Plain: only letters, digits, spaces and common punctuation; no quote opening; each bracket pair holds a
    phrase (not a list marker like "(a)") without a stop; every stop ends the line or is followed by a space
    (a full stop between digits is a decimal point) and comes after a closing bracket, an amount, a
    percentage, a year or a word of two or more letters that pysbd does not list as an abbreviation."""
    if not _PLAIN_CHARS.fullmatch(line) or _QUOTE_OPENING.search(line):
        return None
    if "(" in line or ")" in line:
        outside = _PARENTHESES.sub("", line)
        if "(" in outside or ")" in outside:
            return None  # nested or unbalanced
        if any(" " not in group.strip() or _STOP.search(group) for group in _PARENTHESES.findall(line)):
            return None
    for stop in _STOP.finditer(line):
        at = stop.start()
        after = line[at + 1 : at + 2]
        if after not in ("", " "):
            if line[at] == "." and line[at - 1 : at].isdigit() and after.isdigit():
                continue
            return None
        word = line[:at].rpartition(" ")[2]
        if word.endswith(")") or _AMOUNT.fullmatch(word):
            continue
        word = word.rstrip("'’")
        if len(word) < 2 or not word.replace("-", "").isalpha() or word.lower() in _ABBREVIATIONS:
            return None
    return _AFTER_STOP.split(line)


def _segment_line(line: str) -> list[str]:
    """pysbd's segments of one line, a block at a time when the line is long (see the module docstring)."""
    if (plain := _plain_segments(line)) is not None:
        return plain
    segments: list[str] = []
    start = 0
    while len(line) - start > BLOCK_CHARS:
        end = line.rfind(" ", start + BLOCK_CHARS // 2, start + BLOCK_CHARS)
        end = end if end > start else start + BLOCK_CHARS
        found = _segmenter().segment(line[start:end])
        complete = found[:-1]  # the block's last segment may go on past its end: segmented again next time
        consumed = sum(len(segment) for segment in complete)
        if consumed and line.startswith("".join(complete), start):
            segments.extend(complete)
            start += consumed
        else:  # no boundary in a whole block (or pysbd changed the text): the block stands as one segment
            segments.extend(found)
            start = end
    segments.extend(_segmenter().segment(line[start:]))
    return segments
