"""The real Prefect server the deployment tests register and run deployments on (the worker's)."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.prefect_server import PrefectServer


@pytest.fixture(scope="module")
def server(prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """The worker's Prefect server, and the environment of a process reporting there (its own Prefect home)."""
    return prefect_server.api_url, prefect_server.environment(tmp_path_factory.mktemp("prefect-home"))


@pytest.fixture
def client(server: tuple[str, dict[str, str]]) -> Iterator[Any]:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: server[0]}), get_client(sync_client=True) as sync_client:
        yield sync_client
