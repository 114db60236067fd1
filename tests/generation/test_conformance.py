"""One conformance suite over every registered question generator (after scikit-learn's estimator checks); the
rules ship in ``assay.testing.conformance.generators`` for plugins written elsewhere."""

import re
from dataclasses import dataclass, field

import pytest

from assay.generation import GeneratorSpec, QuestionGenerator, generator_class, generator_ids, register
from assay.generation.registry import metadata_problems
from assay.testing.conformance import Check, parametrize_with_checks
from assay.testing.conformance.generators import generator_checks

IDS = generator_ids()


def test_the_catalogue_has_the_seed_generators() -> None:
    assert set(IDS) >= {
        "simple_factual_questions",
        "yes_or_no_questions",
        "numerical_questions",
        "procedure_questions",
        "multi_hop_questions",
        "comparison_questions",
        "inference_questions",
        "ambiguity_handling",
        "out_of_scope_questions",
        "misleading_premise_questions",
    }


def test_an_unknown_id_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown question generator 'nope'; known generators: ambiguity_handling, "):
        generator_class("nope")


@parametrize_with_checks(generator_checks())
def test_every_generator_conforms(check: Check) -> None:
    check()


def _spec(**changes: object) -> GeneratorSpec:
    fields = {"id": "broken_questions", "display_name": "Broken", "description": "A test double.", "question_type": "x"}
    return GeneratorSpec(**{**fields, **changes})  # type: ignore[arg-type]


@dataclass
class _Works(QuestionGenerator):
    spec = _spec()

    def generate(self, chunks, *, topic, rng, count):  # type: ignore[no-untyped-def]
        return []


@dataclass
class _NotASlug(_Works):
    spec = _spec(id="Broken Questions")


@dataclass
class _NoDescription(_Works):
    spec = _spec(description="  ")


@dataclass
class _MistypedFlag(_Works):
    spec = _spec(needs_llm="yes")


class _PlainSpec(_Works):
    spec = {"id": "broken_questions"}  # type: ignore[assignment]


@dataclass
class _Abstract(QuestionGenerator):
    spec = _spec()


@dataclass
class _RequiredField(_Works):
    tone: str = field(kw_only=True)


@pytest.mark.parametrize(
    ("cls", "problem"),
    [
        (_NotASlug, "spec.id 'Broken Questions' is not a lower-case slug (a-z, 0-9, _)"),
        (_NoDescription, "spec.description is empty"),
        (_MistypedFlag, "spec.needs_llm must be a bool, got 'yes'"),
        (_PlainSpec, "spec must be a GeneratorSpec"),
        (_Abstract, "does not implement generate"),
        (_RequiredField, "field 'tone' has no default"),
        (int, "is not a QuestionGenerator subclass"),
    ],
)
def test_a_broken_generator_fails_registration_naming_it(cls: type, problem: str) -> None:
    assert metadata_problems(_Works) == []  # each double differs from a working one by its one fault
    with pytest.raises(ValueError, match=re.escape(f"question generator '{cls.__name__}': {problem}")):
        register(cls)
    assert "broken_questions" not in generator_ids()


def test_a_second_class_for_an_id_is_refused() -> None:
    @dataclass
    class Impostor(_Works):
        spec = generator_class("numerical_questions").spec

    with pytest.raises(ValueError, match="question generator 'numerical_questions' is registered twice"):
        register(Impostor)
    assert generator_class("numerical_questions").__name__ == "NumericalQuestions"
