"""The real Prefect server the deployment tests register and run deployments on (one per test module)."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.prefect_server import running_prefect_server, server_environment


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    home = tmp_path_factory.mktemp("prefect-home")
    with running_prefect_server(home) as api_url:
        yield api_url, server_environment(home, api_url)


@pytest.fixture
def client(server: tuple[str, dict[str, str]]) -> Iterator[Any]:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: server[0]}), get_client(sync_client=True) as sync_client:
        yield sync_client
