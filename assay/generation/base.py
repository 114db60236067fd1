"""The question generator contract (seed 002 "Test generation": 10+ generators, each a question type).

A generator is a small dataclass: metadata declared once in ``spec``, configuration in fields, and
``generate`` turning a topic's chunks into test cases. Dependencies are injected: the offline generators
here use none, while LLM-backed ones (any OpenAI-compatible endpoint) take the ``llm`` field, typed as a
Protocol so tests pass fakes. Cases come back with provisional keys; ``generate_suite`` gives the final ones.
"""

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, TypeVar

from assay.generation.extraction import facts_of
from assay.generation.facts import Fact
from assay.generation.text import name_words, organisation, parse
from assay.models import Chunk, TestCase

GENERATED = "generated"
T = TypeVar("T")


class LanguageModel(Protocol):
    """One chat completion, the only thing an LLM-backed generator needs from a model host."""

    def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str: ...


@dataclass(frozen=True)
class GeneratorSpec:
    id: str
    display_name: str
    description: str
    question_type: str
    needs_llm: bool = False


@dataclass
class QuestionGenerator(ABC):
    spec: ClassVar[GeneratorSpec]

    llm: LanguageModel | None = None
    organisation: str | None = None
    """Who "we" is in the corpus; inferred from the chunks when not given."""

    @abstractmethod
    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        """Up to ``count`` cases from ``chunks`` (one topic); fewer when the text offers fewer."""

    def write(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        """The cases of ``generate``, rewritten by ``llm`` from their source chunks when the generator has one
        (offline where the model fails), each marked with who wrote it (``generation.written``). A generator
        that needs the LLM wrote its cases with it already."""
        from assay.generation.written import OFFLINE, marked, write_cases, written_by_llm

        cases = self.generate(chunks, topic=topic, rng=rng, count=count)
        if self.llm is None:
            return [marked(case, OFFLINE) for case in cases]
        if self.spec.needs_llm:
            return [marked(case, written_by_llm(self.llm)) for case in cases]
        return write_cases(cases, chunks, self.llm, self.spec.question_type, self.speaker(chunks))

    def speaker(self, chunks: Sequence[Chunk]) -> str:
        return self.organisation or organisation(chunks)

    def facts(self, chunks: Sequence[Chunk]) -> list[Fact]:
        speaker = self.speaker(chunks)
        return [fact for chunk in chunks for fact in facts_of(parse(chunk), speaker)]

    def names(self, chunks: Sequence[Chunk]) -> frozenset[str]:
        """Words kept capitalised after a lead-in ('Yes, Harbourline Bank ...')."""
        return name_words(self.speaker(chunks))

    def case(
        self,
        number: int,
        *,
        topic: str,
        prompt: str,
        expected_output: str,
        sources: Sequence[str],
        output_condition: str = "",
        in_scope: bool = True,
    ) -> TestCase:
        return TestCase(
            key=f"{self.spec.id}-{number}",
            prompt=prompt,
            expected_output=expected_output,
            output_condition=output_condition,
            categories=[self.spec.question_type, GENERATED],
            sources=list(dict.fromkeys(sources)),
            expected_retrieved_doc_uris=list(dict.fromkeys(ref.rsplit("#", 1)[0] for ref in sources))
            if in_scope
            else [],
            topic=topic,
            generator=self.spec.id,
        )


def quoted(text: str) -> str:
    """A condition-language string literal (evaluators.conditions) matching ``text`` exactly."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def requires(*figures: str) -> str:
    """An output condition that every figure appears in the answer."""
    return " AND ".join(quoted(figure) for figure in dict.fromkeys(figures) if figure)


def pick(rng: random.Random, items: Sequence[T], count: int) -> list[T]:
    """``count`` items in a seeded random order, without repeats."""
    return rng.sample(list(items), min(count, len(items)))
