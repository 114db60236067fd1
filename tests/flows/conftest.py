from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.corpora import sample_data_path
from assay.models import TestSuite
from tests.support.prefect_server import PrefectServer


@pytest.fixture(scope="session", autouse=True)
def prefect_backend(prefect_server: PrefectServer) -> Iterator[None]:
    """Every flow test of the session reports to the worker's Prefect server."""
    with prefect_server.reporting():
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
