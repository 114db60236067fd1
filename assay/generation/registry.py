"""Generator registry: ``@register`` records a generator class under its spec id once its metadata checks out;
other packages declare theirs as entry points in the group "assay.generators" (see ``assay.registry``)."""

import dataclasses
import inspect
import re
from typing import Any

from assay.generation.base import GeneratorSpec, LanguageModel, QuestionGenerator
from assay.registry import Registry

ENTRY_POINT_GROUP = "assay.generators"
_SLUG = re.compile(r"[a-z][a-z0-9_]*")


def metadata_problems(cls: type) -> list[str]:
    """What keeps ``cls`` from being a usable generator (its spec, and what ``build_generator`` needs of it);
    empty when nothing does."""
    if not (isinstance(cls, type) and issubclass(cls, QuestionGenerator)):
        return ["is not a QuestionGenerator subclass"]
    spec = getattr(cls, "spec", None)
    if not isinstance(spec, GeneratorSpec):
        return ["spec must be a GeneratorSpec"]
    mistyped = [
        f"spec.{field.name} must be a {field.type.__name__}, got {getattr(spec, field.name)!r}"
        for field in dataclasses.fields(GeneratorSpec)
        if type(getattr(spec, field.name)) is not field.type
    ]
    if mistyped:
        return mistyped
    problems = [f"spec.{name} is empty" for name in ("display_name", "description") if not getattr(spec, name).strip()]
    problems += [
        f"spec.{name} {getattr(spec, name)!r} is not a lower-case slug (a-z, 0-9, _)"
        for name in ("id", "question_type")
        if not _SLUG.fullmatch(getattr(spec, name))
    ]
    if inspect.isabstract(cls):
        problems.append("does not implement generate")
    if not dataclasses.is_dataclass(cls):
        problems.append("is not a dataclass")
    else:
        problems += [
            f"field {field.name!r} has no default"
            for field in dataclasses.fields(cls)
            if field.init and field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        ]
    return problems


def _check_metadata(cls: type[QuestionGenerator]) -> None:
    problems = metadata_problems(cls)
    if problems:
        raise ValueError(f"question generator {getattr(cls, '__name__', cls)!r}: {'; '.join(problems)}")


_GENERATORS: Registry[QuestionGenerator] = Registry(
    "question generator",
    lambda cls: cls.spec.id,
    _check_metadata,
    plural="generators",
    entry_point_group=ENTRY_POINT_GROUP,
)
_REGISTRY = _GENERATORS.registered  # the same dict: tests slot doubles in with monkeypatch.setitem


def register(cls: type[QuestionGenerator]) -> type[QuestionGenerator]:
    return _GENERATORS.register(cls)


def generator_ids() -> list[str]:
    return _GENERATORS.ids()


def generator_class(generator_id: str) -> type[QuestionGenerator]:
    return _GENERATORS.get(generator_id)


def build_generator(generator_id: str, llm: LanguageModel | None = None, **parameters: Any) -> QuestionGenerator:
    """An instance of a registered generator; LLM-backed ones refuse to build without a model."""
    cls = generator_class(generator_id)
    if cls.spec.needs_llm and llm is None:
        raise ValueError(f"question generator {generator_id!r} needs an LLM (pass llm=...)")
    return cls(llm=llm, **parameters)
