"""Perturbator registry: ``@register`` records a plugin under its id once its metadata checks out; other
packages declare theirs as entry points in the group "assay.perturbators" (see ``assay.registry``)."""

import inspect

from assay.perturbators.base import Perturbator, metadata_problems

from assay.models.plugins import PluginOrigin, UnavailablePlugin
from assay.registry import Registry

ENTRY_POINT_GROUP = "assay.perturbators"


def _check_metadata(cls: type[Perturbator]) -> None:
    """Fails at import time on incomplete metadata, so a broken plugin never half-works."""
    problems = metadata_problems(cls) + (["does not implement apply"] if inspect.isabstract(cls) else [])
    if problems:
        raise ValueError(f"perturbator {cls.__name__}: {'; '.join(problems)}")


_PERTURBATORS: Registry[Perturbator] = Registry(
    "perturbator",
    lambda cls: cls.id,
    _check_metadata,
    case_insensitive=True,
    base=Perturbator,
    entry_point_group=ENTRY_POINT_GROUP,
)


def register(cls: type[Perturbator]) -> type[Perturbator]:
    return _PERTURBATORS.register(cls)


def perturbator_ids() -> list[str]:
    return _PERTURBATORS.ids()


def get_perturbator(perturbator_id: str) -> Perturbator:
    """The perturbator registered as ``perturbator_id``; case does not matter, so the seed's 'random_OCR'
    finds 'random_ocr'."""
    return _PERTURBATORS.get(perturbator_id)()


def perturbator_origin(perturbator_id: str) -> PluginOrigin:
    """The package the perturbator comes from: Assay, or the one whose entry point declared it."""
    return _PERTURBATORS.origin(perturbator_id)


def unavailable_perturbators() -> list[UnavailablePlugin]:
    """Perturbators other packages declare that failed to import or to register, with the reason."""
    return _PERTURBATORS.unavailable()
