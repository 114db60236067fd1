from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def prefect_backend() -> Iterator[None]:
    """One temporary Prefect server and database for every flow test of the session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
