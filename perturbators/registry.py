"""Perturbator registry: ``@register`` records a plugin under its id once its metadata checks out."""

from assay.perturbators.base import Perturbator, metadata_problems

from assay.registry import Registry


def _check_metadata(cls: type[Perturbator]) -> None:
    """Fails at import time on incomplete metadata, so a broken plugin never half-works."""
    problems = metadata_problems(cls)
    if problems:
        raise ValueError(f"perturbator {cls.__name__}: {'; '.join(problems)}")


_PERTURBATORS: Registry[Perturbator] = Registry(
    "perturbator", lambda cls: cls.id, _check_metadata, case_insensitive=True
)


def register(cls: type[Perturbator]) -> type[Perturbator]:
    return _PERTURBATORS.register(cls)


def perturbator_ids() -> list[str]:
    return _PERTURBATORS.ids()


def get_perturbator(perturbator_id: str) -> Perturbator:
    """The perturbator registered as ``perturbator_id``; case does not matter, so the seed's 'random_OCR'
    finds 'random_ocr'."""
    return _PERTURBATORS.get(perturbator_id)()
