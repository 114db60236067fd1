"""MRM step 2: a test suite generated from the topics of step 1, one test per topic, every chosen
generator asked for ``per_topic`` cases of each topic."""

import random
from collections.abc import Sequence

from assay.generation.base import LanguageModel
from assay.generation.registry import build_generator, generator_class, generator_ids
from assay.generation.text import organisation
from assay.models import Chunk, Test, TestCase, TestSuite
from assay.models.mrm import Topic, TopicModel
from assay.models.workflow import CASES_PER_TOPIC


def generate_suite(
    topic_model: TopicModel,
    chunks: Sequence[Chunk],
    *,
    generators: Sequence[str] | None = None,
    per_topic: int = CASES_PER_TOPIC,
    topic_ids: set[int] | None = None,
    seed: int = 0,
    name: str = "Generated suite",
    llm: LanguageModel | None = None,
) -> TestSuite:
    """Keys are ``gen-<topic id>-<generator>-<n>``; each (topic, generator) draws from its own seeded
    random stream, so adding a generator or a topic leaves the other cases unchanged. With ``llm``, the
    model rewrites each case from its source chunks (``QuestionGenerator.write``)."""
    if per_topic < 1:
        raise ValueError(f"per_topic must be at least 1, got {per_topic}")
    chosen = list(generators) if generators is not None else _offline_generators()
    speaker = organisation(chunks)
    built = {generator_id: build_generator(generator_id, llm=llm, organisation=speaker) for generator_id in chosen}
    by_ref = {chunk.ref: chunk for chunk in chunks}
    tests = []
    for topic in sorted(topic_model.topics, key=lambda item: item.id):
        if topic_ids is not None and topic.id not in topic_ids:
            continue
        topic_chunks = _topic_chunks(topic, by_ref)
        cases: list[TestCase] = []
        prompts: set[str] = set()
        for generator_id, generator in built.items():
            rng = random.Random(f"{seed}:{topic.id}:{generator_id}")
            generated = generator.write(topic_chunks, topic=topic.label, rng=rng, count=per_topic)
            fresh = []
            for case in generated:
                if case.prompt not in prompts:
                    prompts.add(case.prompt)
                    fresh.append(case)
            cases += [
                case.model_copy(update={"key": f"gen-{topic.id}-{generator_id}-{number}"})
                for number, case in enumerate(fresh)
            ]
        documents = sorted({chunk.doc_uri for chunk in topic_chunks})
        tests.append(
            Test(
                key=f"topic-{topic.id}",
                name=topic.label,
                description=f"Generated from topic {topic.id} ({', '.join(topic.keywords)}).",
                documents=documents,
                test_cases=cases,
            )
        )
    return TestSuite(
        name=name,
        description=f"Generated from {len(tests)} topics by {', '.join(chosen)} (seed {seed}, {per_topic} per topic).",
        tests=tests,
    )


def _offline_generators() -> list[str]:
    return [generator_id for generator_id in generator_ids() if not generator_class(generator_id).spec.needs_llm]


def _topic_chunks(topic: Topic, by_ref: dict[str, Chunk]) -> list[Chunk]:
    missing = [ref for ref in topic.chunk_refs if ref not in by_ref]
    if missing:
        raise ValueError(
            f"topic {topic.id} ({topic.label!r}) names chunks that are not among the given chunks: "
            f"{', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}; generate from the chunks it was modeled on"
        )
    return [by_ref[ref] for ref in topic.chunk_refs]
