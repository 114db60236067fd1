"""MRM step 2, test generation: offline question generators (extractive and template based) and the
suite builder. Importing the package registers every generator."""

from assay.generation import adversarial, factual, procedure, reasoning
from assay.generation.base import GeneratorSpec, LanguageModel, QuestionGenerator
from assay.generation.registry import build_generator, generator_class, generator_ids, register
from assay.generation.suite import generate_suite

__all__ = [
    "GeneratorSpec",
    "LanguageModel",
    "QuestionGenerator",
    "adversarial",
    "build_generator",
    "factual",
    "generate_suite",
    "generator_class",
    "generator_ids",
    "procedure",
    "reasoning",
    "register",
]
