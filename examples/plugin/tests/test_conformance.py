"""The plugins pass Assay's conformance suite, the checks every built-in passes (run with the plugin installed)."""

from assay.evaluators import Services

from assay.testing.conformance import Check, parametrize_with_checks
from assay.testing.conformance.evaluators import evaluator_checks
from assay.testing.conformance.perturbators import perturbator_checks


@parametrize_with_checks(evaluator_checks(["mentions_question_terms"]))
def test_the_evaluator_conforms(check: Check) -> None:
    check(Services())


@parametrize_with_checks(perturbator_checks(["uppercase_words"]))
def test_the_perturbator_conforms(check: Check) -> None:
    check()
