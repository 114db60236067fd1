"""Running every fact shape over a chunk, first match per sentence, once per distinct chunk text."""

from collections.abc import Callable
from functools import lru_cache

from assay.generation.facts import Fact, copula, key_value
from assay.generation.statements import about, definition, minimum_age, phone, within, you_have
from assay.generation.text import Line, ParsedChunk, parse
from assay.models import Chunk

Shape = Callable[[ParsedChunk, Line, str], Fact | None]
# Most specific first: a sentence becomes the fact of the first shape that fits it.
SHAPES: tuple[Shape, ...] = (key_value, phone, definition, you_have, within, minimum_age, copula, about)


def facts_of(source: ParsedChunk, organisation: str) -> list[Fact]:
    return list(_facts(source.chunk.doc_uri, source.chunk.index, source.chunk.text, organisation))


@lru_cache(maxsize=4096)
def _facts(doc_uri: str, index: int, text: str, organisation: str) -> tuple[Fact, ...]:
    source = parse(Chunk(doc_uri=doc_uri, index=index, text=text))
    found: list[Fact] = []
    for line in source.sentences:
        for shape in SHAPES:
            fact = shape(source, line, organisation)
            if fact is not None:
                found.append(fact)
                break
    return tuple(found)
