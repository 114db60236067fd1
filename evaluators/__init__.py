"""Evaluators: one plugin per module, registered by id with ``@register``.

Importing this package imports every module in it, so a new evaluator only needs its own module. Plugin
modules import heavy libraries (torch, transformers, sacrebleu...) inside functions, never at module level,
so listing the catalogue stays fast.
"""

import importlib
import pkgutil

from assay.evaluators.base import CaseContext, Evaluator, Scored, Services, Unscored
from assay.evaluators.registry import build_evaluator, evaluator_class, evaluator_ids, register
from assay.evaluators.runner import run_evaluator

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "CaseContext",
    "Evaluator",
    "Scored",
    "Services",
    "Unscored",
    "build_evaluator",
    "evaluator_class",
    "evaluator_ids",
    "register",
    "run_evaluator",
]
