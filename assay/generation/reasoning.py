"""Generators whose answer needs more than one lookup: multi-hop (two chunks), comparison (two figures)
and inference (a conditional rule applied to the asker's situation)."""

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import regex

from assay.generation.base import GeneratorSpec, QuestionGenerator, pick, requires
from assay.generation.conditionals import conditionals_of
from assay.generation.facts import MEASURE_HEADS, Fact, head
from assay.generation.factual import FIGURE_KINDS, condition_for
from assay.generation.figures import amount, unit
from assay.generation.phrasing import as_question, as_sentence, is_or_are, lower_first, strip_end
from assay.generation.registry import register
from assay.generation.text import parse
from assay.models import Chunk, TestCase


@register
@dataclass
class MultiHopQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="multi_hop_questions",
        display_name="Multi-hop questions",
        description="One question needing two facts from two different chunks of the topic; pairs about the "
        "same product or document come first.",
        question_type="multi_hop",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = [fact for fact in self.facts(chunks) if fact.kind != "about"]
        pairs = [(a, b) for a, b in combinations(facts, 2) if a.ref != b.ref and a.question != b.question]
        related = [(a, b) for a, b in pairs if _related(a, b)]
        chosen = pick(rng, related, count)
        chosen += pick(rng, [pair for pair in pairs if pair not in chosen], count - len(chosen))
        cases = []
        for number, (first, second) in enumerate(chosen):
            conditions = [condition for condition in (condition_for(first), condition_for(second)) if condition]
            cases.append(
                self.case(
                    number,
                    topic=topic,
                    prompt=_joined(first, second),
                    sources=[first.ref, second.ref],
                    expected_output=f"{as_sentence(first.answer)} {as_sentence(second.answer)}",
                    output_condition=" AND ".join(conditions),
                )
            )
        return cases


def _related(first: Fact, second: Fact) -> bool:
    same_product = bool(first.subject) and first.subject == second.subject
    return same_product or first.source.chunk.doc_uri == second.source.chunk.doc_uri


def _joined(first: Fact, second: Fact) -> str:
    """'What is the monthly fee for the X, and what is its interest rate?' when both ask a measure of one
    product; otherwise the two questions joined with 'and'."""
    if first.label and second.label and first.subject and first.subject == second.subject:
        pattern = rf"^What (?:is|are) the .+ for the {regex.escape(first.subject)}\?$"
        if regex.match(pattern, first.question) and regex.match(pattern, second.question):
            return as_question(f"{strip_end(first.question)}, and what {is_or_are(second.label)} its {second.label}")
    second_question = second.question
    frame = regex.match(r"^(?:When I (?P<task>[^,]+)|For the (?P<subject>[^,]+)), ", second_question)
    if frame and (first.question.startswith(frame.group(0)) or (frame.group("subject") or "\0") in first.question):
        second_question = second_question[len(frame.group(0)) :]
    return as_question(f"{strip_end(first.question)}, and {lower_first(second_question)}")


@register
@dataclass
class ComparisonQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="comparison_questions",
        display_name="Comparison questions",
        description="Which is higher: the same measure of two products, or two measures of one product; the "
        "answer names the higher figure (or says they are equal).",
        question_type="comparison",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = [
            fact
            for fact in self.facts(chunks)
            if fact.kind in FIGURE_KINDS
            and fact.label.split()[:1]
            and head(fact.label) in MEASURE_HEADS
            and _number(fact) is not None
        ]
        pairs = [(a, b) for a, b in combinations(facts, 2) if _comparable(a, b)]
        unequal = [(a, b) for a, b in pairs if _number(a) != _number(b)]
        chosen = pick(rng, unequal, count)
        chosen += pick(rng, [pair for pair in pairs if pair not in unequal], count - len(chosen))
        cases = []
        for number, (first, second) in enumerate(chosen):
            prompt, expected, figure = _compare(first, second)
            cases.append(
                self.case(
                    number,
                    topic=topic,
                    prompt=prompt,
                    expected_output=expected,
                    sources=[first.ref, second.ref],
                    output_condition=requires(figure),
                )
            )
        return cases


def _number(fact: Fact) -> float | None:
    return amount(fact.figure.text) if fact.figure is not None else None


def _per(fact: Fact) -> str:
    """What the figure is per ('per day', 'a month'): only like periods are compared."""
    assert fact.figure is not None
    return fact.value.split(fact.figure.text, 1)[-1].strip().lower()


def _comparable(first: Fact, second: Fact) -> bool:
    assert first.figure is not None and second.figure is not None
    if unit(first.figure) != unit(second.figure) or _per(first) != _per(second):
        return False
    same_measure = first.label == second.label and first.subject != second.subject and first.subject and second.subject
    same_product = first.subject == second.subject and first.label != second.label
    return bool(same_measure) or (same_product and first.label.split()[-1] == second.label.split()[-1])


def _compare(first: Fact, second: Fact) -> tuple[str, str, str]:
    assert first.figure is not None and second.figure is not None
    a, b = _number(first) or 0.0, _number(second) or 0.0
    high, low = (first, second) if a >= b else (second, first)
    assert high.figure is not None and low.figure is not None
    if first.label == second.label:
        label = first.label
        prompt = as_question(f"Which has the higher {label}: the {first.subject} or the {second.subject}")
        if a == b:
            return prompt, f"Neither: the {label} is {high.figure.text} for both.", high.figure.text
        answer = f"The {high.subject} has the higher {label}: {high.figure.text}, compared with {low.figure.text}."
        return prompt, f"{answer} {as_sentence(high.answer)}", high.figure.text
    product = f" for the {first.subject}" if first.subject else ""
    prompt = as_question(f"Which is higher{product}: the {first.label} or the {second.label}")
    if a == b:
        return (
            prompt,
            f"Neither: the {first.label} and the {second.label} are both {high.figure.text}.",
            high.figure.text,
        )
    answer = f"The {high.label} is higher: {high.figure.text}, compared with {low.figure.text} for the {low.label}."
    return prompt, answer, high.figure.text


@register
@dataclass
class InferenceQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="inference_questions",
        display_name="Inference questions",
        description="'If I ..., will ...?' questions built from the corpus's conditional rules (if, when, "
        "unless); answering needs the rule applied to the asker's situation.",
        question_type="inference",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        speaker, names = self.speaker(chunks), self.names(chunks)
        rules = [rule for chunk in chunks for rule in conditionals_of(parse(chunk), speaker, names)]
        return [
            self.case(number, topic=topic, prompt=rule.question, expected_output=rule.answer, sources=[rule.ref])
            for number, rule in enumerate(pick(rng, rules, count))
        ]
