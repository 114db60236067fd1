from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.corpora import sample_data_path
from assay.models import TestSuite


@pytest.fixture(scope="session", autouse=True)
def prefect_backend() -> Iterator[None]:
    """One temporary Prefect server and database for every flow test of the session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six cases of the sample suite (two tests, three cases each): cheap to ask and to score."""
    suite = TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())
    suite.tests = suite.tests[:2]
    for test in suite.tests:
        test.test_cases = test.test_cases[:3]
    path = tmp_path_factory.mktemp("suite") / "suite.json"
    path.write_text(suite.model_dump_json())
    return path
