"""Perturbator registry: ``@register`` records a plugin under its id once its metadata checks out."""

from assay.perturbators.base import Perturbator, metadata_problems

_REGISTRY: dict[str, type[Perturbator]] = {}


def register(cls: type[Perturbator]) -> type[Perturbator]:
    """Fails at import time on incomplete metadata or a reused id, so a broken plugin never half-works."""
    problems = metadata_problems(cls)
    if problems:
        raise ValueError(f"perturbator {cls.__name__}: {'; '.join(problems)}")
    if cls.id in _REGISTRY and _REGISTRY[cls.id] is not cls:
        raise ValueError(f"perturbator id {cls.id!r} is registered twice")
    _REGISTRY[cls.id] = cls
    return cls


def perturbator_ids() -> list[str]:
    return sorted(_REGISTRY)


def get_perturbator(perturbator_id: str) -> Perturbator:
    """The perturbator registered as ``perturbator_id``; case does not matter, so the seed's 'random_OCR'
    finds 'random_ocr'."""
    try:
        return _REGISTRY[perturbator_id.lower()]()
    except KeyError:
        raise ValueError(
            f"unknown perturbator {perturbator_id!r}; known perturbators: {', '.join(perturbator_ids())}"
        ) from None
