"""Procedure questions from numbered how-to steps: the first step, all the steps, and what comes next."""

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from assay.generation.base import GeneratorSpec, QuestionGenerator, pick
from assay.generation.phrasing import as_question, as_sentence, strip_end, user_voice
from assay.generation.registry import register
from assay.generation.text import parse, sentences_of
from assay.models import Chunk, TestCase

# A step that starts with one of these is not an instruction ("If the merchant ...", "We'll ...").
_NOT_IMPERATIVE = {"if", "we", "we'll", "once", "the", "your", "it", "this", "a", "an", "many", "when", "our", "you"}
MAX_STEP_WORDS = 14


@dataclass(frozen=True)
class Step:
    number: int
    text: str
    ref: str


@dataclass(frozen=True)
class Procedure:
    task: str
    steps: tuple[Step, ...]


def procedures(chunks: Sequence[Chunk]) -> list[Procedure]:
    """Numbered steps of each how-to document, in order, across the chunks that hold them; only runs
    that start at step 1 and have no gap count, so 'the steps' is the whole procedure."""
    by_task: dict[str, dict[int, Step]] = defaultdict(dict)
    for chunk in sorted(chunks, key=lambda item: (item.doc_uri, item.index)):
        parsed = parse(chunk)
        if not parsed.task:
            continue
        for line in parsed.lines:
            if line.kind == "step" and line.number not in by_task[parsed.task]:
                by_task[parsed.task][line.number] = Step(line.number, line.text, chunk.ref)
    found = []
    for task, numbered in by_task.items():
        run = []
        for number in range(1, len(numbered) + 1):
            if number not in numbered:
                break
            run.append(numbered[number])
        if len(run) >= 2:
            found.append(Procedure(task, tuple(run)))
    return found


def _first_sentence(step: Step) -> str:
    sentences = sentences_of(step.text)
    return strip_end(sentences[0]) if sentences else strip_end(step.text)


def _imperative(step: Step) -> bool:
    first = _first_sentence(step)
    return first.split()[0].lower() not in _NOT_IMPERATIVE and len(first.split()) <= MAX_STEP_WORDS


@register
@dataclass
class ProcedureQuestions(QuestionGenerator):
    spec = GeneratorSpec(
        id="procedure_questions",
        display_name="Procedure questions",
        description="Questions on numbered how-to steps: the first step, the full list of steps, and the step "
        "that follows a given one.",
        question_type="procedure",
    )

    def generate(self, chunks: Sequence[Chunk], *, topic: str, rng: random.Random, count: int) -> list[TestCase]:
        speaker = self.speaker(chunks)
        candidates: list[tuple[str, str, list[str]]] = []
        for procedure in procedures(chunks):
            steps, task = procedure.steps, procedure.task
            candidates.append(
                (f"What is the first step to {task}", _lead("The first step is", steps[0]), [steps[0].ref])
            )
            listing = " ".join(f"{step.number}. {as_sentence(_first_sentence(step))}" for step in steps)
            candidates.append((f"What are the steps to {task}", listing, [step.ref for step in steps]))
            for before, after in pairwise(steps):
                if _imperative(before):
                    instruction = _first_sentence(before)
                    done = user_voice(instruction[:1].lower() + instruction[1:], speaker)
                    candidates.append(
                        (f"After I {done}, what is the next step to {task}", _lead("The next step is", after),
                         [before.ref, after.ref])
                    )  # fmt: skip
        return [
            self.case(number, topic=topic, prompt=as_question(prompt), expected_output=expected, sources=sources)
            for number, (prompt, expected, sources) in enumerate(pick(rng, candidates, count))
        ]


def _lead(lead: str, step: Step) -> str:
    """'The first step is to freeze your card ...' for an instruction, 'Step 1: ...' otherwise."""
    sentence = _first_sentence(step)
    if sentence.split()[0].lower() not in _NOT_IMPERATIVE:
        return f"{lead} to {sentence[:1].lower()}{sentence[1:]}."
    return f"Step {step.number}: {as_sentence(sentence)}"
