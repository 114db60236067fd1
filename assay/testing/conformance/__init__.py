"""Conformance checks for the four kinds of plugin (evaluators, perturbators, hosts, question generators),
shipped so that a plugin written outside this repository is held to the same contract as the built-ins.

After scikit-learn's ``parametrize_with_checks``: each kind's module lists ``Check``s, one per plugin and
rule, and ``parametrize_with_checks`` turns them into one pytest case each::

    from assay.testing.conformance import parametrize_with_checks
    from assay.testing.conformance.perturbators import perturbator_checks

    @parametrize_with_checks(perturbator_checks(["my_perturbator"]))
    def test_my_perturbator(check):
        check()

A plugin of another package is found through its entry point once its package is installed, so the checks
name it by id like a built-in (``examples/plugin/tests/test_conformance.py``).

A check raises ``AssertionError`` when the plugin breaks the contract and ``unittest.SkipTest`` (which
pytest reports as a skip) when it cannot run here, e.g. an evaluator whose model weights are absent.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Check:
    """One rule applied to one plugin: ``check(*resources)`` calls ``rule(plugin_id, *resources)``."""

    plugin_id: str
    rule: Callable[..., None]

    @property
    def name(self) -> str:
        return self.rule.__name__.removeprefix("check_")

    def __call__(self, *resources: Any) -> None:
        self.rule(self.plugin_id, *resources)

    def __str__(self) -> str:
        return f"{self.plugin_id}-{self.name}"


def checks_for(plugin_ids: Iterable[str], rules: Sequence[Callable[..., None]]) -> list[Check]:
    """Every rule for every plugin, plugin by plugin."""
    return [Check(plugin_id, rule) for plugin_id in plugin_ids for rule in rules]


def parametrize_with_checks(checks: Sequence[Check]) -> Any:
    """A pytest ``parametrize`` mark with one case per check, named ``<plugin id>-<rule>``."""
    import pytest

    return pytest.mark.parametrize("check", list(checks), ids=str)
