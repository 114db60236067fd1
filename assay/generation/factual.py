"""Single-fact generators: simple factual, yes/no and numerical questions, each answered by one sentence."""

import random
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from assay.generation.base import GeneratorSpec, QuestionGenerator, pick, requires
from assay.generation.facts import Fact, altered
from assay.generation.figures import alter, amount
from assay.generation.phrasing import as_question, lead_in, lower_first, strip_end
from assay.generation.registry import register
from assay.models import Chunk, TestCase

FIGURE_KINDS = {"money", "percent", "duration", "count"}
ENTITY_KINDS = {"text", "contact", "phone"}
_EMAIL = regex.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MONTHLY = regex.compile(r"^(?P<figure>£\d[\d,]*(?:\.\d\d)?) (?:per|a|each) month$")


def condition_for(fact: Fact) -> str:
    """The figure (or e-mail address) a correct answer must state."""
    if fact.figure is not None:
        return requires(fact.figure.text)
    email = _EMAIL.search(fact.answer)
    return requires(email.group(0).rstrip(".")) if email else ""


@register
@dataclass
class SimpleFactualQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="simple_factual_questions",
        display_name="Simple factual questions",
        description="Who/what/where questions answered by one sentence of a document: names, contacts, "
        "definitions first, then what a document says about a subject, then stated figures.",
        question_type="factual",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = self.facts(chunks)
        chosen = pick(rng, [fact for fact in facts if fact.kind in ENTITY_KINDS], count)
        chosen += pick(rng, [fact for fact in facts if fact.kind == "about"], count - len(chosen))
        chosen += pick(rng, [fact for fact in facts if fact.kind in FIGURE_KINDS], count - len(chosen))
        return [
            self.case(
                number,
                topic=topic,
                prompt=as_question(fact.question),
                expected_output=fact.answer,
                sources=[fact.ref],
                output_condition=condition_for(fact),
            )
            for number, fact in enumerate(chosen)
        ]


@register
@dataclass
class YesOrNoQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="yes_or_no_questions",
        display_name="Yes or no questions",
        description="Closed questions on a stated figure; about half state a wrong figure, so the right answer "
        "is 'No' followed by the correct fact.",
        question_type="yes_no",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = [fact for fact in self.facts(chunks) if fact.claim and fact.figure is not None]
        names = self.names(chunks)
        offset = rng.randrange(2)
        cases = []
        for number, fact in enumerate(pick(rng, facts, count)):
            assert fact.figure is not None
            if (number + offset) % 2:
                prompt = altered(fact, fact.claim, alter(fact.figure.text, rng))
                expected = lead_in("No", fact.answer, names)
            else:
                prompt, expected = fact.with_value(fact.claim, fact.value), lead_in("Yes", fact.answer, names)
            cases.append(
                self.case(
                    number,
                    topic=topic,
                    prompt=as_question(prompt),
                    expected_output=expected,
                    sources=[fact.ref],
                    output_condition=requires(fact.figure.text),
                )
            )
        return cases


@register
@dataclass
class NumericalQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="numerical_questions",
        display_name="Numerical questions",
        description="How much / how long / what rate questions on amounts, rates, limits and days, including "
        "a yearly total worked out from a monthly charge.",
        question_type="numerical",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = [fact for fact in self.facts(chunks) if fact.kind in FIGURE_KINDS and fact.figure is not None]
        yearly = pick(rng, [fact for fact in facts if fact.label and _MONTHLY.match(fact.value)], min(1, count))
        cases = [self._yearly(number, fact, topic) for number, fact in enumerate(yearly)]
        for fact in pick(rng, [fact for fact in facts if fact not in yearly], count - len(cases)):
            assert fact.figure is not None
            cases.append(
                self.case(
                    len(cases),
                    topic=topic,
                    prompt=as_question(fact.question),
                    expected_output=fact.answer,
                    sources=[fact.ref],
                    output_condition=requires(fact.figure.text),
                )
            )
        return cases

    def _yearly(self, number: int, fact: Fact, topic: str) -> TestCase:
        """'£12 per month' -> 'How much does it come to over a year?' -> '£144': arithmetic on a fact."""
        monthly = _MONTHLY.match(fact.value)
        assert monthly is not None
        value = amount(monthly.group("figure")) or 0.0
        total = value * 12
        shown = f"£{total:,.2f}" if total != int(total) else f"£{int(total):,}"
        stem = strip_end(lower_first(fact.answer))
        prompt = as_question(f"How much does the {fact.label}{_subject(fact)} come to over a full year")
        expected = f"{shown} a year: {stem}, and 12 × {monthly.group('figure')} = {shown}."
        return self.case(
            number,
            topic=topic,
            prompt=prompt,
            expected_output=expected,
            sources=[fact.ref],
            output_condition=requires(shown),
        )


def _subject(fact: Fact) -> str:
    return f" for the {fact.subject}" if fact.subject and fact.subject.lower() not in fact.label.lower() else ""
