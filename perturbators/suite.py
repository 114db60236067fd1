"""Perturb a test suite (seed 002 "Perturbations guide"): each selected case gets a perturbed twin next to it.

The twin is linked to its original by a PERTURBATION relationship and labelled with categories naming the
perturbator, intensity and seed, which is what the robustness steps count flips by. Each case draws from
its own random generator, seeded by (seed, case key, perturbator id), so adding or removing other cases
never changes how a case is perturbed.
"""

import random
from collections.abc import Collection

from assay.perturbators.base import check_intensity
from assay.perturbators.registry import get_perturbator

from assay.models.suite import PERTURBATION, Relationship, TestCase, TestSuite

PERTURBED = "perturbed"
UNCHANGED = "unchanged"
# Categories that describe one perturbation step; a case perturbed again sheds its parent's.
_STEP_PREFIXES = ("perturbator:", "intensity:", "seed:")


def perturbed_key(original_key: str, perturbator_id: str, intensity: str) -> str:
    return f"{original_key}~{perturbator_id}-{intensity}"


def case_rng(seed: int, case_key: str, perturbator_id: str) -> random.Random:
    """The generator for one case; string seeds hash with SHA-512, so it is the same in every process."""
    return random.Random(f"{seed}\x1f{case_key}\x1f{perturbator_id}")


def perturbation_categories(perturbator_id: str, intensity: str, seed: int, *, unchanged: bool) -> list[str]:
    categories = [PERTURBED, f"perturbator:{perturbator_id}", f"intensity:{intensity}", f"seed:{seed}"]
    return [*categories, UNCHANGED] if unchanged else categories


def perturb_case(case: TestCase, perturbator_id: str, intensity: str, *, seed: int = 0) -> TestCase:
    """The perturbed twin of ``case``: prompt perturbed, everything else copied.

    A prompt the perturbator leaves as it was (no y or z for the QWERTY swap, no listed word for synonyms)
    still yields a twin, marked "unchanged", so a report can say the perturbation had nothing to act on
    instead of the case silently going missing.
    """
    perturbator = get_perturbator(perturbator_id)
    intensity = check_intensity(intensity)
    prompt = perturbator.perturb(case.prompt, intensity=intensity, rng=case_rng(seed, case.key, perturbator.id))
    inherited = [
        category
        for category in case.categories
        if category not in (PERTURBED, UNCHANGED) and not category.startswith(_STEP_PREFIXES)
    ]
    step = perturbation_categories(perturbator.id, intensity, seed, unchanged=prompt == case.prompt)
    return case.model_copy(
        deep=True,
        update={
            "key": perturbed_key(case.key, perturbator.id, intensity),
            "prompt": prompt,
            "categories": [*inherited, *step],
            "relationships": [
                *(link.model_copy() for link in case.relationships if link.type != PERTURBATION),
                Relationship(type=PERTURBATION, target=case.key),
            ],
        },
    )


def perturb_suite(
    suite: TestSuite,
    perturbator_id: str,
    intensity: str,
    *,
    seed: int = 0,
    keys: Collection[str] | None = None,
) -> TestSuite:
    """A new suite holding every original case followed, for each selected case (all when ``keys`` is
    None), by its perturbed twin. The input suite is not modified.

    Raises ValueError for an unknown perturbator, intensity or key, and when a twin's key is already taken
    (the suite was perturbed the same way before).
    """
    perturbator = get_perturbator(perturbator_id)
    intensity = check_intensity(intensity)
    existing = {case.key for _, case in suite.cases()}
    selected = existing if keys is None else set(keys)
    unknown = sorted(selected - existing)
    if unknown:
        raise ValueError(f"suite {suite.name!r} has no test case(s) {', '.join(map(repr, unknown))}")
    tests = []
    for test in suite.tests:
        cases: list[TestCase] = []
        for case in test.test_cases:
            cases.append(case.model_copy(deep=True))
            if case.key not in selected:
                continue
            twin = perturb_case(case, perturbator.id, intensity, seed=seed)
            if twin.key in existing:
                raise ValueError(
                    f"test case {twin.key!r} already exists: case {case.key!r} was already perturbed with "
                    f"{perturbator.id} at {intensity} intensity"
                )
            cases.append(twin)
        tests.append(test.model_copy(update={"test_cases": cases}))
    return suite.model_copy(update={"tests": tests})
