"""The shipped conformance checks (``assay.testing.conformance``) fail a plugin that breaks the contract:
each double below differs from a built-in by one fault, and exactly the rule about that fault fails."""

import random

import pytest
from assay.perturbators import get_perturbator

from assay.testing.conformance import Check, parametrize_with_checks
from assay.testing.conformance import perturbators as perturbator_rules
from assay.testing.conformance.perturbators import perturbator_checks


class _IgnoresTheSeed(type(get_perturbator("comma"))):  # type: ignore[misc]
    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        return super().apply(text, amount, random.Random(0))


class _DropsFigures(type(get_perturbator("comma"))):  # type: ignore[misc]
    def apply(self, text: str, amount: float, rng: random.Random) -> str:
        return super().apply(text, amount, rng).replace("3.25%", "3%")


@pytest.mark.parametrize(
    ("double", "failing"),
    [
        (_IgnoresTheSeed, {"different_seeds_usually_give_different_outputs"}),
        (_DropsFigures, {"input_variations_keep_figures_intact"}),
    ],
)
def test_exactly_the_broken_rule_fails(double: type, failing: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(perturbator_rules, "get_perturbator", lambda perturbator_id: double())
    failed = set()
    for check in perturbator_checks(["comma"]):
        try:
            check()
        except AssertionError:
            failed.add(check.name)
    assert failed == failing


def test_each_check_is_one_named_case() -> None:
    checks = perturbator_checks(["comma", "base64"])
    names = [str(check) for check in checks]
    assert "comma-input_variations_keep_figures_intact" in names
    assert "base64-input_variations_keep_figures_intact" not in names  # an attack, not an input variation
    assert len(names) == len(set(names))
    mark = parametrize_with_checks(checks)
    assert mark.args == ("check", checks)


@parametrize_with_checks(perturbator_checks(["comma"]))
def test_a_plugin_author_runs_them_like_this(check: Check) -> None:
    check()
