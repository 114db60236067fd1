"""Generator registry: ``@register`` records a generator class under its spec id."""

from typing import Any

from assay.generation.base import LanguageModel, QuestionGenerator

_REGISTRY: dict[str, type[QuestionGenerator]] = {}


def register(cls: type[QuestionGenerator]) -> type[QuestionGenerator]:
    generator_id = cls.spec.id
    if generator_id in _REGISTRY and _REGISTRY[generator_id] is not cls:
        raise ValueError(f"question generator id {generator_id!r} is registered twice")
    _REGISTRY[generator_id] = cls
    return cls


def generator_ids() -> list[str]:
    return sorted(_REGISTRY)


def generator_class(generator_id: str) -> type[QuestionGenerator]:
    try:
        return _REGISTRY[generator_id]
    except KeyError:
        raise ValueError(
            f"unknown question generator {generator_id!r}; known generators: {', '.join(generator_ids())}"
        ) from None


def build_generator(generator_id: str, llm: LanguageModel | None = None, **parameters: Any) -> QuestionGenerator:
    """An instance of a registered generator; LLM-backed ones refuse to build without a model."""
    cls = generator_class(generator_id)
    if cls.spec.needs_llm and llm is None:
        raise ValueError(f"question generator {generator_id!r} needs an LLM (pass llm=...)")
    return cls(llm=llm, **parameters)
