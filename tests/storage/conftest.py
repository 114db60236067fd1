"""Fixtures for the storage tests: both store backends (the SeaweedFS server is in tests/conftest.py)."""

from pathlib import Path

import pytest

from assay.storage import LocalObjectStore, ObjectStore


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.slow)])
def object_store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return LocalObjectStore(tmp_path / "store")
    return request.getfixturevalue("seaweed").object_store()
