"""Evaluators: one plugin per module, registered by id. Importing this package registers all of them."""

from evaluators import answer_semantic_similarity, text_matching
from evaluators.base import CaseContext, Evaluator, Services, Unscored
from evaluators.registry import build_evaluator, evaluator_class, evaluator_ids, register
from evaluators.runner import run_evaluator

__all__ = [
    "CaseContext",
    "Evaluator",
    "Services",
    "Unscored",
    "answer_semantic_similarity",
    "build_evaluator",
    "evaluator_class",
    "evaluator_ids",
    "register",
    "run_evaluator",
    "text_matching",
]
