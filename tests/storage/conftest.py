"""Fixtures for the storage tests: one real SeaweedFS server per session, and both store backends."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.storage import LocalObjectStore, ObjectStore
from tests.support.seaweed import SeaweedServer, running_seaweed


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedServer]:
    """Started only when a test asks for it, so ``-k local`` runs need no server."""
    with running_seaweed(tmp_path_factory.mktemp("seaweed")) as server:
        yield server


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.slow)])
def object_store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return LocalObjectStore(tmp_path / "store")
    return request.getfixturevalue("seaweed").object_store()
