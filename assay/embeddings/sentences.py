"""Sentence splitting that copes with real text.

pysbd handles abbreviations ("Dr.", "e.g.", "U.S.") and decimal numbers; on top of it we repair two
failures seen on real documents: a missing space after a full stop ("AER.It rises") is not a boundary
for pysbd, and an abbreviation followed by a lowercase word ("Mon. at 9") is wrongly split.
"""

from functools import lru_cache

import regex

_MISSING_SPACE = regex.compile(r"(?<=[\p{L}\d%)\]][.!?])(?=\p{Lu}\p{Ll}+(?:[\s,;:!?]|\.(?:\s|$)|$))")
_STARTS_LOWER = regex.compile(r"^[\p{Ll}]")


@lru_cache(maxsize=1)
def _segmenter():  # type: ignore[no-untyped-def]
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into stripped sentences; blank input gives an empty list."""
    return list(_split_cached(text))


@lru_cache(maxsize=65536)
def _split_cached(text: str) -> tuple[str, ...]:
    """pysbd costs ~2 ms a line and the same texts (retrieved chunks, answers) are split by several
    evaluators and for many cases: each distinct text is split once per process."""
    text = text.strip()
    if not text:
        return ()
    repaired = _MISSING_SPACE.sub(" ", text)
    sentences: list[str] = []
    for line in repaired.splitlines():
        for segment in _segmenter().segment(line):
            segment = segment.strip()
            if not segment:
                continue
            if sentences and _STARTS_LOWER.match(segment):
                sentences[-1] = f"{sentences[-1]} {segment}"
            else:
                sentences.append(segment)
    return tuple(sentences)
