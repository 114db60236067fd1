"""Reading a chunk the way a question writer would: its document title, what it is about (a product, a
task), its headings, list items, numbered steps and clean sentences, with markdown markers removed."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex

from assay.embeddings.sentences import split_sentences
from assay.models import Chunk

# pysbd ends a sentence after these; in this kind of text they never end one ("approx. £25", "Mon.-Fri.").
_NOT_AN_END = ("approx.", "e.g.", "i.e.", "etc.", "incl.", "vs.", "Mon.", "Tue.", "Wed.", "Thu.", "Fri.", "Sat.")
_ORGANISATION = regex.compile(
    r"\b(?:[A-Z][a-z]+ ){1,3}(?:Bank|Building Society|Insurance|Group|Ltd|plc|Inc|Limited|Council|University)\b"
)
_STEP = regex.compile(r"^(\d{1,2})[.)]\s+(.+)$")
_ITEM = regex.compile(r"^[-*•]\s+(.+)$")
_PRODUCT_TITLE = regex.compile(r"^(?P<subject>.+?):?\s+Product Sheet$", regex.IGNORECASE)
_HOW_TO = regex.compile(r"^How to\s+(?P<task>.+)$", regex.IGNORECASE)
DEFAULT_ORGANISATION = "the provider"


@dataclass(frozen=True)
class Line:
    """One unit of a chunk: a paragraph sentence, a bullet item or a numbered step."""

    kind: str
    text: str
    heading: str = ""
    number: int = 0


@dataclass(frozen=True)
class ParsedChunk:
    chunk: Chunk
    title: str
    subject: str
    task: str
    lines: tuple[Line, ...]

    @property
    def sentences(self) -> list[Line]:
        """Every sentence of the chunk, list items and steps split too, each tagged with its line's kind."""
        out: list[Line] = []
        for line in self.lines:
            for index, sentence in enumerate(sentences_of(line.text)):
                kind = line.kind if index == 0 else "sentence"
                out.append(Line(kind, sentence, line.heading, line.number))
        return out


def sentences_of(text: str) -> list[str]:
    """pysbd's sentences with its abbreviation splits mended ("approx." / "£25.18 in interest")."""
    merged: list[str] = []
    for sentence in split_sentences(text):
        if merged and (merged[-1].endswith(_NOT_AN_END) or sentence[:1] in {"-", "–"}):
            joiner = "" if sentence[:1] in {"-", "–"} else " "
            merged[-1] = f"{merged[-1]}{joiner}{sentence}"
        else:
            merged.append(sentence)
    return merged


def parse(chunk: Chunk) -> ParsedChunk:
    return _parse(chunk.doc_uri, chunk.index, chunk.text)


@lru_cache(maxsize=4096)
def _parse(doc_uri: str, index: int, text: str) -> ParsedChunk:
    raw = [line.strip() for line in text.splitlines() if line.strip()]
    title = ""
    if raw and _looks_like_title(raw[0]):
        title = raw.pop(0).lstrip("#").strip()
    lines: list[Line] = []
    heading = ""
    for line in raw:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("|"):
            continue  # table rows: cells without sentences
        elif step := _STEP.match(line):
            lines.append(Line("step", step.group(2), heading, int(step.group(1))))
        elif item := _ITEM.match(line):
            lines.append(Line("item", item.group(1), heading))
        else:
            lines.append(Line("sentence", line, heading))
    chunk = Chunk(doc_uri=doc_uri, index=index, text=text)
    return ParsedChunk(chunk, title, _subject(title), _task(title), tuple(lines))


def _looks_like_title(line: str) -> bool:
    if line.startswith("#") and not line.startswith("##"):
        return True
    plain = not line.startswith(("-", "|", "*", "#")) and not _STEP.match(line)
    return plain and not line.endswith((".", "!", "?", ":", ";")) and len(line.split()) <= 14


def _subject(title: str) -> str:
    """The product a product sheet describes: questions about its figures must name it."""
    match = _PRODUCT_TITLE.match(title)
    return match.group("subject").strip() if match else ""


def _task(title: str) -> str:
    """'How to Reset Your Online Banking Password' -> 'reset my online banking password'."""
    match = _HOW_TO.match(title)
    if not match:
        return ""
    words = []
    for word in match.group("task").split():
        if word.lower() == "your":
            words.append("my")
        elif sum(char.isupper() for char in word) > 1:
            words.append(word)  # acronyms: ISA, PIN
        else:
            words.append(word.lower())
    return " ".join(words)


def organisation(chunks: Sequence[Chunk]) -> str:
    """The organisation the corpus speaks for ("we"), by its most frequent formal name."""
    counts = Counter(match.group(0) for chunk in chunks for match in _ORGANISATION.finditer(chunk.text))
    for name, _ in counts.most_common():
        if not name.endswith(("Ltd", "plc", "Limited", "Inc")) or len(counts) == 1:
            return name
    return DEFAULT_ORGANISATION


def name_words(organisation_name: str) -> frozenset[str]:
    """Words never lowercased after a lead-in: the organisation's name."""
    return frozenset(organisation_name.split()) - {"the"}
