"""Perturbators (seed 002 "Perturbations"): controlled variations of test-case prompts for robustness testing.

One plugin per module, registered by id with ``@register``. Importing this package imports every plugin
module in it (modules starting with "_" are helpers, sub-packages hold data), so a new perturbator only needs
its own module. ``perturbators.suite.perturb_suite`` applies one to a whole test suite.
"""

import importlib
import pkgutil

from assay.perturbators.base import INTENSITIES, KINDS, Intensity, Kind, Perturbator, check_intensity
from assay.perturbators.registry import get_perturbator, perturbator_ids, register

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_") and not _module.ispkg:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "INTENSITIES",
    "KINDS",
    "Intensity",
    "Kind",
    "Perturbator",
    "check_intensity",
    "get_perturbator",
    "perturbator_ids",
    "register",
]
