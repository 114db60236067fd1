"""A module marked ``steps`` is one scenario: once a step fails, the later steps are skipped, naming it."""

import pytest

pytest_plugins = ["pytester"]

SCENARIO = """
import pytest

pytestmark = pytest.mark.steps


def test_first():
    pass


def test_second():
    assert False, "the form never came"


def test_third():
    pass
"""


def test_after_a_failed_step_the_rest_are_skipped_and_say_which_failed(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tests.conftest import pytest_runtest_makereport, pytest_runtest_setup  # noqa")
    pytester.makeini("[pytest]\nmarkers =\n    steps: one scenario\n")
    pytester.makepyfile(test_scenario=SCENARIO)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*an earlier step of this scenario failed: test_second*"])
