"""One conformance suite over every registered question generator (after scikit-learn's estimator checks)."""

import random
import re
from dataclasses import dataclass, field
from functools import cache

import pytest
from assay.evaluators.conditions import parse_condition

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.generation import GeneratorSpec, QuestionGenerator, build_generator, generator_class, generator_ids, register
from assay.generation.base import GENERATED
from assay.generation.registry import metadata_problems
from assay.models import Chunk

IDS = generator_ids()
OFFLINE = [generator_id for generator_id in IDS if not generator_class(generator_id).spec.needs_llm]
COUNT = 3


@cache
def topics() -> dict[str, list[Chunk]]:
    """The bundled sample corpus, one topic per document (as tests/mrm/test_generation.py's suite tests)."""
    chunks = chunk_corpus(load_corpus(sample_data_path() / "corpus"))
    return {uri: [chunk for chunk in chunks if chunk.doc_uri == uri] for uri in sorted({c.doc_uri for c in chunks})}


class _FakeLLM:
    def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str:
        return "What is asked?"


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


@pytest.mark.parametrize("generator_id", IDS)
def test_spec_is_valid_and_round_trips_through_the_registry(generator_id: str) -> None:
    cls = generator_class(generator_id)
    assert metadata_problems(cls) == []
    assert cls.spec.id == generator_id and generator_id in generator_ids()
    assert len(cls.spec.description) > 60 and cls.spec.display_name.strip() == cls.spec.display_name
    assert register(cls) is cls and generator_class(generator_id) is cls  # registering it again is harmless


@pytest.mark.parametrize("generator_id", IDS)
def test_building_follows_the_spec(generator_id: str) -> None:
    cls = generator_class(generator_id)
    if cls.spec.needs_llm:
        with pytest.raises(ValueError, match=rf"question generator '{generator_id}' needs an LLM \(pass llm=\.\.\.\)"):
            build_generator(generator_id)
    else:
        offline = build_generator(generator_id)
        assert type(offline) is cls and offline.llm is None
    llm = _FakeLLM()
    built = build_generator(generator_id, llm=llm, organisation="Acme Bank")
    assert type(built) is cls and built.llm is llm and built.organisation == "Acme Bank"


@pytest.mark.parametrize("generator_id", OFFLINE)
def test_generating_from_the_sample_corpus_gives_well_formed_cases(generator_id: str) -> None:
    question_type = generator_class(generator_id).spec.question_type
    total = 0
    for topic, chunks in topics().items():
        cases = build_generator(generator_id).generate(chunks, topic=topic, rng=random.Random(0), count=COUNT)
        again = build_generator(generator_id).generate(chunks, topic=topic, rng=random.Random(0), count=COUNT)
        assert cases == again  # the seed decides everything
        assert len(cases) <= COUNT and len({case.key for case in cases}) == len(cases)
        refs = {chunk.ref for chunk in chunks}
        for case in cases:
            assert re.fullmatch(rf"{generator_id}-\d+", case.key), case.key
            assert (case.generator, case.topic, case.categories) == (generator_id, topic, [question_type, GENERATED])
            assert case.prompt.strip() and case.prompt.endswith("?") and case.expected_output.strip(), case
            assert case.sources and set(case.sources) <= refs, case.sources
            documents = list(dict.fromkeys(ref.rsplit("#", 1)[0] for ref in case.sources))
            assert case.expected_retrieved_doc_uris in ([], documents)
            if case.output_condition:  # the expected answer itself must satisfy the condition
                assert parse_condition(case.output_condition).matches(case.expected_output), case
        total += len(cases)
    assert total > 0, f"{generator_id} found nothing to ask in the whole sample corpus"


@pytest.mark.parametrize("generator_id", OFFLINE)
def test_nothing_to_read_or_nothing_asked_gives_no_cases(generator_id: str) -> None:
    chunks = next(chunks for chunks in topics().values())
    generator = build_generator(generator_id)
    assert generator.generate([], topic="t", rng=random.Random(0), count=COUNT) == []
    assert generator.generate(chunks, topic="t", rng=random.Random(0), count=0) == []


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
