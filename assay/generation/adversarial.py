"""Generators of questions a good system must not answer straight: ambiguous ones (ask which is meant),
out-of-scope ones (say the documents do not cover it) and false premises (correct them)."""

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from assay.generation.base import GeneratorSpec, QuestionGenerator, pick, requires
from assay.generation.facts import MEASURE_HEADS, Fact, altered, head
from assay.generation.factual import FIGURE_KINDS
from assay.generation.figures import alter
from assay.generation.phrasing import as_question, is_or_are, lower_first, strip_end
from assay.generation.registry import register
from assay.generation.text import parse
from assay.models import Chunk, TestCase

MAX_OPTIONS = 4
_VAGUE = {"duration": "How long is it", "money": "How much is it", "percent": "What is the rate"}
_POLICY_TITLE = regex.compile(r"\b(?:Policy|Notice|Summary|Terms|Statement|Charter|Code)\b")


@register
@dataclass
class AmbiguityHandlingQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="ambiguity_handling",
        display_name="Ambiguity handling",
        description="Deliberately underspecified questions (the measure of which product? which fee?); the "
        "expected answer asks for clarification and lists the options the documents give.",
        question_type="ambiguous",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = [fact for fact in self.facts(chunks) if fact.figure is not None and fact.kind in FIGURE_KINDS]
        candidates = _same_measure(facts) + _same_head(facts) + _same_kind(facts)
        cases = []
        for number, (prompt, options) in enumerate(pick(rng, candidates, count)):
            listed = "; ".join(lower_first(strip_end(option.answer)) for option in options[:MAX_OPTIONS])
            expected = (
                "The question could refer to more than one thing, so it needs clarifying: which one do you mean? "
                f"The documents give: {listed}."
            )
            cases.append(
                self.case(
                    number, topic=topic, prompt=prompt, expected_output=expected, sources=[o.ref for o in options]
                )
            )
        return cases


def _same_measure(facts: list[Fact]) -> list[tuple[str, list[Fact]]]:
    """'What is the monthly account fee?' when two products state one."""
    groups: dict[str, dict[str, Fact]] = defaultdict(dict)
    for fact in facts:
        if fact.label and fact.subject:
            groups[fact.label].setdefault(fact.subject, fact)
    return [
        (as_question(f"What {is_or_are(label)} the {label}"), list(by_subject.values()))
        for label, by_subject in groups.items()
        if len(by_subject) >= 2
    ]


def _same_head(facts: list[Fact]) -> list[tuple[str, list[Fact]]]:
    """'What is the fee for the Classic Credit Card?' when it has a late payment fee, an over-limit fee..."""
    groups: dict[tuple[str, str], dict[str, Fact]] = defaultdict(dict)
    for fact in facts:
        noun = head(fact.label) if fact.label else ""
        if noun in MEASURE_HEADS and noun != fact.label:
            groups[(noun, fact.subject)].setdefault(fact.label, fact)
    found = []
    for (noun, subject), by_label in groups.items():
        if len(by_label) >= 2:
            product = f" for the {subject}" if subject else ""
            found.append((as_question(f"What {is_or_are(noun)} the {noun}{product}"), list(by_label.values())))
    return found


def _same_kind(facts: list[Fact]) -> list[tuple[str, list[Fact]]]:
    """'How long does it take?' when the topic states several durations: the fallback of any topic."""
    groups: dict[str, dict[str, Fact]] = defaultdict(dict)
    for fact in facts:
        if fact.kind in _VAGUE:
            groups[fact.kind].setdefault(fact.question, fact)
    return [(as_question(_VAGUE[kind]), list(group.values())) for kind, group in groups.items() if len(group) >= 2]


@register
@dataclass
class OutOfScopeQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="out_of_scope_questions",
        display_name="Out-of-scope questions",
        description="Questions on the topic's products and guides that the documents do not answer (history, "
        "market comparisons, statistics, people); the expected answer says the documents do not contain it.",
        question_type="out_of_scope",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        text = " ".join(chunk.text for chunk in chunks).lower()
        year = str(rng.randrange(1998, 2013))
        candidates: list[tuple[str, str, str, str]] = []  # question, what is missing, marker, source ref
        for fact in self.facts(chunks):
            if fact.label and fact.subject and head(fact.label) in MEASURE_HEADS:
                about = f"the {fact.label} for the {fact.subject}"
                candidates.append((f"What was {about} in {year}", f"what {about} was in {year}", year, fact.ref))
                candidates.append(
                    (
                        f"How does {about} compare with what other providers offer",
                        f"how {about} compares with other providers",
                        r"other providers|competitor",
                        fact.ref,
                    )
                )
        for chunk in chunks:
            parsed = parse(chunk)
            if parsed.subject:
                question = f"How many customers currently have the {parsed.subject}"
                candidates.append(
                    (
                        question,
                        f"how many customers have the {parsed.subject}",
                        r"how many customers|number of customers",
                        chunk.ref,
                    )
                )
            if parsed.task:
                task = regex.sub(r"\bmy\b", "their", parsed.task)
                candidates.append(
                    (
                        f"On average, how long did it take customers to {task} last year",
                        f"how long it took customers on average to {task}",
                        r"on average|last year",
                        chunk.ref,
                    )
                )
            elif _POLICY_TITLE.search(parsed.title):
                candidates.append(
                    (
                        f"Who approved the {parsed.title}, and when was it last updated",
                        f"who approved the {parsed.title} or when it was last updated",
                        r"approved|updated",
                        chunk.ref,
                    )
                )
        unique = {question: (question, missing, marker, ref) for question, missing, marker, ref in candidates}
        usable = [item for item in unique.values() if not regex.search(item[2], text)]
        return [
            self.case(
                number,
                topic=topic,
                prompt=as_question(question),
                sources=[ref],
                in_scope=False,
                expected_output=f"The documents do not contain this information: they do not say {missing}, so the "
                "question cannot be answered from them.",
            )
            for number, (question, missing, _, ref) in enumerate(pick(rng, usable, count))
        ]


@register
@dataclass
class MisleadingPremiseQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="misleading_premise_questions",
        display_name="Misleading premise questions",
        description="Questions that take a wrong figure for granted ('Why is the fee £5?'); the expected "
        "answer corrects the premise with the documented figure.",
        question_type="misleading_premise",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        facts = [fact for fact in self.facts(chunks) if fact.premise and fact.figure is not None]
        cases = []
        for number, fact in enumerate(pick(rng, facts, count)):
            assert fact.figure is not None
            wrong = alter(fact.figure.text, rng)
            expected = f"The premise is incorrect: it is {fact.figure.text}, not {wrong}. {fact.answer}"
            cases.append(
                self.case(
                    number,
                    topic=topic,
                    prompt=as_question(altered(fact, fact.premise, wrong)),
                    expected_output=expected,
                    sources=[fact.ref],
                    output_condition=requires(fact.figure.text),
                )
            )
        return cases
