"""perturb_suite: twins next to their originals, linked and labelled, reproducible per case."""

import pytest
from assay.perturbators.suite import case_rng, perturb_suite

from assay.models import Relationship, Test, TestCase, TestSuite
from assay.models.suite import PERTURBATION


def suite(*extra: TestCase) -> TestSuite:
    return TestSuite(
        name="bank",
        description="d",
        tests=[
            Test(
                key="cards",
                test_cases=[
                    TestCase(
                        key="a",
                        prompt="Why is my yearly fee so high?",
                        expected_output="It is £12.",
                        categories=["fees"],
                        topic="cards",
                        generator="person",
                        sources=["fees.md#0"],
                    ),
                    TestCase(key="b", prompt="What is the fee?", topic="cards"),
                ],
            ),
            Test(key="loans", test_cases=[TestCase(key="c", prompt="Lazy loans?"), *extra]),
        ],
    )


def test_each_case_gets_a_twin_right_after_it() -> None:
    perturbed = perturb_suite(suite(), "qwerty", "high", seed=7)
    assert [[case.key for case in test.test_cases] for test in perturbed.tests] == [
        ["a", "a~qwerty-high", "b", "b~qwerty-high"],
        ["c", "c~qwerty-high"],
    ]
    twin = perturbed.tests[0].test_cases[1]
    assert twin.prompt == "Whz is mz zearlz fee so high?"
    assert twin.relationships == [Relationship(type=PERTURBATION, target="a")] and twin.perturbation_of == "a"
    assert twin.categories == ["fees", "perturbed", "perturbator:qwerty", "intensity:high", "seed:7"]
    assert (twin.expected_output, twin.topic, twin.generator, twin.sources) == (
        "It is £12.",
        "cards",
        "person",
        ["fees.md#0"],
    )
    assert perturbed.name == "bank" and perturbed.description == "d"


def test_an_unchanged_prompt_is_recorded_not_dropped() -> None:
    twin = perturb_suite(suite(), "qwerty", "high").tests[0].test_cases[3]
    assert twin.key == "b~qwerty-high" and twin.prompt == "What is the fee?"
    assert twin.categories == ["perturbed", "perturbator:qwerty", "intensity:high", "seed:0", "unchanged"]


def test_the_input_suite_is_not_modified() -> None:
    original = suite()
    before = original.model_dump()
    perturbed = perturb_suite(original, "random_replacement", "high", seed=1)
    assert original.model_dump() == before and original.case_count == 3
    perturbed.tests[0].test_cases[0].categories.append("changed later")
    assert original.tests[0].test_cases[0].categories == ["fees"]


def test_the_same_seed_repeats_and_another_seed_differs() -> None:
    first = perturb_suite(suite(), "random_replacement", "high", seed=1)
    assert first == perturb_suite(suite(), "random_replacement", "high", seed=1)
    assert first != perturb_suite(suite(), "random_replacement", "high", seed=2)


def test_a_case_is_perturbed_the_same_whatever_else_is_in_the_suite() -> None:
    alone = perturb_suite(suite(), "random_keyboard_typos", "high", seed=3)
    crowded = perturb_suite(
        suite(TestCase(key="d", prompt="Another question entirely")), "random_keyboard_typos", "high", seed=3
    )
    prompts = {case.key: case.prompt for _, case in crowded.cases()}
    assert all(prompts[case.key] == case.prompt for _, case in alone.cases())
    assert case_rng(3, "a", "x").random() == case_rng(3, "a", "x").random() != case_rng(3, "b", "x").random()


def test_only_the_selected_keys_are_perturbed() -> None:
    perturbed = perturb_suite(suite(), "comma", "low", keys={"b"})
    assert [case.key for _, case in perturbed.cases()] == ["a", "b", "b~comma-low", "c"]
    with pytest.raises(ValueError, match=r"suite 'bank' has no test case\(s\) 'zz'"):
        perturb_suite(suite(), "comma", "low", keys={"b", "zz"})


def test_unknown_perturbator_or_intensity_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown perturbator 'typos'; known perturbators: antonym"):
        perturb_suite(suite(), "typos", "low")
    with pytest.raises(ValueError, match="unknown intensity 'max'"):
        perturb_suite(suite(), "comma", "max")


def test_perturbing_the_same_way_twice_is_refused() -> None:
    once = perturb_suite(suite(), "comma", "low")
    with pytest.raises(ValueError, match="'a~comma-low' already exists"):
        perturb_suite(once, "comma", "low")


def test_a_perturbed_case_perturbed_again_describes_only_the_last_step() -> None:
    once = perturb_suite(suite(), "qwerty", "high", keys={"a"})
    twice = perturb_suite(once, "base64", "low", seed=5, keys={"a~qwerty-high"})
    chained = next(case for _, case in twice.cases() if case.key == "a~qwerty-high~base64-low")
    assert chained.categories == ["fees", "perturbed", "perturbator:base64", "intensity:low", "seed:5"]
    assert chained.relationships == [Relationship(type=PERTURBATION, target="a~qwerty-high")]


def test_the_robustness_step_and_the_encoding_guardrail_read_the_twins() -> None:
    from assay.evaluators._encodings import is_encoding_case

    from assay.mrm.robustness import perturbed_only

    only = perturbed_only(suite(), ["base64", "comma"], ["low"], seed=0)
    keys = [case.key for _, case in only.cases()]
    assert keys == ["a~base64-low", "b~base64-low", "c~base64-low", "a~comma-low", "b~comma-low", "c~comma-low"]
    assert all(is_encoding_case(case.categories) == ("base64" in case.key) for _, case in only.cases())
