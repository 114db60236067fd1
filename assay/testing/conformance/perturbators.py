"""The perturbator contract: complete metadata, the seed decides the output (and different seeds usually
differ), more intensity changes at least as much, blank text comes back as is, an unknown intensity is
refused, input variations keep figures intact, and perturbing a suite leaves the input suite untouched."""

import random
import re
import statistics
from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

from assay.models import Test, TestCase, TestSuite
from assay.perturbators import INTENSITIES, KINDS, get_perturbator, perturbator_ids
from assay.perturbators.base import metadata_problems
from assay.perturbators.suite import perturb_suite
from assay.testing.conformance import Check, checks_for

# Each sentence has y/z letters, listed synonyms and antonyms, a name and a protected figure, so every
# perturbator has something to act on.
SENTENCES = (
    "Why is my yearly fee for the Easy Access Saver so high, and can I get a lower rate than 3.25% today?",
    "How do I freeze my lost debit card quickly before somebody uses it abroad?",
    "Is the maximum daily limit for cash withdrawals at a branch really £500, or is that lazy guesswork?",
    "Please explain the early repayment fee on a fixed personal loan over 5 years and show me the steps.",
)
SEEDS = range(10)


def perturb(perturbator_id: str, text: str, intensity: str, seed: int) -> str:
    return get_perturbator(perturbator_id).perturb(text, intensity=intensity, rng=random.Random(seed))


def check_metadata_is_complete(perturbator_id: str) -> None:
    perturbator = get_perturbator(perturbator_id)
    assert metadata_problems(type(perturbator)) == []
    described = perturbator.describe()
    assert described["id"] == perturbator_id and described["kind"] in KINDS
    assert list(described["amounts"]) == list(INTENSITIES)
    assert len(described["description"]) > 60 and described["display_name"] and described["amount_unit"]


def check_the_same_seed_gives_the_same_output(perturbator_id: str) -> None:
    for text in SENTENCES:
        for intensity in INTENSITIES:
            assert perturb(perturbator_id, text, intensity, 3) == perturb(perturbator_id, text, intensity, 3)


def check_different_seeds_usually_give_different_outputs(perturbator_id: str) -> None:
    for text in SENTENCES:
        outputs = {perturb(perturbator_id, text, "medium", seed) for seed in SEEDS}
        assert len(outputs) >= 2, (text, outputs)


def check_higher_intensity_changes_at_least_as_much(perturbator_id: str) -> None:
    def mean_distance(intensity: str) -> float:
        return statistics.mean(
            Levenshtein.distance(text, perturb(perturbator_id, text, intensity, seed))
            for text in SENTENCES
            for seed in SEEDS
        )

    low, medium, high = (mean_distance(intensity) for intensity in INTENSITIES)
    assert 0 < low <= medium <= high and low < high, (low, medium, high)


def check_blank_text_comes_back_as_is(perturbator_id: str) -> None:
    for text in ("", "   ", "\n"):
        assert perturb(perturbator_id, text, "high", 0) == text


def check_an_unknown_intensity_is_refused(perturbator_id: str) -> None:
    try:
        perturb(perturbator_id, SENTENCES[0], "extreme", 0)
    except ValueError as error:
        assert "unknown intensity 'extreme'; expected one of low, medium, high" in str(error), error
    else:
        raise AssertionError("the intensity 'extreme' was accepted")


def check_input_variations_keep_figures_intact(perturbator_id: str) -> None:
    for text in SENTENCES:
        figures = re.findall(r"\S*\d\S*", text)
        for seed in SEEDS:
            output = perturb(perturbator_id, text, "high", seed)
            assert all(figure in output for figure in figures), (figures, output)


def check_perturbing_a_suite_leaves_the_input_suite_untouched(perturbator_id: str) -> None:
    cases = [TestCase(key=f"c{i}", prompt=text, categories=["x"]) for i, text in enumerate(SENTENCES)]
    suite = TestSuite(name="s", tests=[Test(key="t", test_cases=cases)])
    before = suite.model_dump()
    perturbed = perturb_suite(suite, perturbator_id, "high", seed=1)
    assert suite.model_dump() == before
    assert perturbed.case_count == 2 * suite.case_count


RULES = (
    check_metadata_is_complete,
    check_the_same_seed_gives_the_same_output,
    check_different_seeds_usually_give_different_outputs,
    check_higher_intensity_changes_at_least_as_much,
    check_blank_text_comes_back_as_is,
    check_an_unknown_intensity_is_refused,
    check_perturbing_a_suite_leaves_the_input_suite_untouched,
)
INPUT_VARIATION_RULES = (check_input_variations_keep_figures_intact,)


def perturbator_checks(ids: Iterable[str] | None = None) -> list[Check]:
    """Every rule for the perturbators named (default: every registered one); input variations have one more."""
    checks = []
    for perturbator_id in perturbator_ids() if ids is None else ids:
        variation = get_perturbator(perturbator_id).kind == "input_variation"
        checks += checks_for([perturbator_id], RULES + INPUT_VARIATION_RULES if variation else RULES)
    return checks
