"""The question-generator contract: a valid spec that registers again harmlessly, building as the spec says
(an LLM when it needs one), and, for offline generators, well-formed seeded cases from the sample corpus and
none from nothing."""

import random
import re
from collections.abc import Iterable
from functools import cache

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.evaluators.conditions import parse_condition
from assay.generation import build_generator, generator_class, generator_ids, register
from assay.generation.base import GENERATED
from assay.generation.registry import metadata_problems
from assay.models import Chunk
from assay.testing.conformance import Check, checks_for

COUNT = 3


@cache
def topics() -> dict[str, list[Chunk]]:
    """The bundled sample corpus, one topic per document."""
    chunks = chunk_corpus(load_corpus(sample_data_path() / "corpus"))
    return {uri: [chunk for chunk in chunks if chunk.doc_uri == uri] for uri in sorted({c.doc_uri for c in chunks})}


class _FakeLLM:
    def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str:
        return "What is asked?"


def check_spec_is_valid_and_round_trips_through_the_registry(generator_id: str) -> None:
    cls = generator_class(generator_id)
    assert metadata_problems(cls) == []
    assert cls.spec.id == generator_id and generator_id in generator_ids()
    assert len(cls.spec.description) > 60 and cls.spec.display_name.strip() == cls.spec.display_name
    assert register(cls) is cls and generator_class(generator_id) is cls  # registering it again is harmless


def check_building_follows_the_spec(generator_id: str) -> None:
    cls = generator_class(generator_id)
    if cls.spec.needs_llm:
        try:
            build_generator(generator_id)
        except ValueError as error:
            assert f"question generator '{generator_id}' needs an LLM (pass llm=...)" in str(error), error
        else:
            raise AssertionError(f"{generator_id} needs an LLM yet was built without one")
    else:
        offline = build_generator(generator_id)
        assert type(offline) is cls and offline.llm is None
    llm = _FakeLLM()
    built = build_generator(generator_id, llm=llm, organisation="Acme Bank")
    assert type(built) is cls and built.llm is llm and built.organisation == "Acme Bank"


def check_generating_from_the_sample_corpus_gives_well_formed_cases(generator_id: str) -> None:
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


def check_nothing_to_read_or_nothing_asked_gives_no_cases(generator_id: str) -> None:
    chunks = next(chunks for chunks in topics().values())
    generator = build_generator(generator_id)
    assert generator.generate([], topic="t", rng=random.Random(0), count=COUNT) == []
    assert generator.generate(chunks, topic="t", rng=random.Random(0), count=0) == []


RULES = (check_spec_is_valid_and_round_trips_through_the_registry, check_building_follows_the_spec)
OFFLINE_RULES = (
    check_generating_from_the_sample_corpus_gives_well_formed_cases,
    check_nothing_to_read_or_nothing_asked_gives_no_cases,
)


def generator_checks(ids: Iterable[str] | None = None) -> list[Check]:
    """Every rule for the generators named (default: every registered one); those that need no LLM are
    also run on the sample corpus."""
    checks = []
    for generator_id in generator_ids() if ids is None else ids:
        offline = not generator_class(generator_id).spec.needs_llm
        checks += checks_for([generator_id], RULES + OFFLINE_RULES if offline else RULES)
    return checks
