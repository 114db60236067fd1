"""Evaluator registry: ``@register`` records a plugin under its spec id."""

from typing import Any

from assay.evaluators.base import Evaluator, Services

_REGISTRY: dict[str, type[Evaluator]] = {}


def register(cls: type[Evaluator]) -> type[Evaluator]:
    evaluator_id = cls.spec.id
    if not isinstance(cls.shardable, bool):
        raise TypeError(f"evaluator {evaluator_id!r}: 'shardable' must be True or False, got {cls.shardable!r}")
    if evaluator_id in _REGISTRY and _REGISTRY[evaluator_id] is not cls:
        raise ValueError(f"evaluator id {evaluator_id!r} is registered twice")
    _REGISTRY[evaluator_id] = cls
    return cls


def evaluator_ids() -> list[str]:
    return sorted(_REGISTRY)


def evaluator_class(evaluator_id: str) -> type[Evaluator]:
    try:
        return _REGISTRY[evaluator_id]
    except KeyError:
        raise ValueError(
            f"unknown evaluator {evaluator_id!r}; known evaluators: {', '.join(evaluator_ids())}"
        ) from None


def build_evaluator(evaluator_id: str, services: Services | None = None, **parameters: Any) -> Evaluator:
    cls = evaluator_class(evaluator_id)
    known = {meta.name for meta in cls.parameter_meta()}
    unknown = sorted(set(parameters) - known)
    if unknown:
        raise ValueError(
            f"evaluator {evaluator_id!r} has no parameter(s) {unknown}; it takes {sorted(known)}"
        )
    return cls(services=services or Services(), **parameters)
