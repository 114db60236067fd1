"""open_object_store builds the backend the settings name."""

import os
from pathlib import Path

import pytest

from assay.config import Settings
from assay.storage import LocalObjectStore, S3ObjectStore, open_object_store
from assay.testing.seaweed import SeaweedServer


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's ASSAY_* variables and assay.toml out of these tests."""
    for name in list(os.environ):
        if name.startswith("ASSAY_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ASSAY_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.chdir(tmp_path)


def test_local_backend_defaults_to_the_store_under_home(tmp_path: Path) -> None:
    store = open_object_store(Settings(home=tmp_path / "home"))

    assert isinstance(store, LocalObjectStore)
    assert store.root == (tmp_path / "home" / "store").resolve()
    store.put("k", b"v")
    assert (tmp_path / "home" / "store" / "k").read_bytes() == b"v"


def test_local_backend_uses_an_explicit_path(tmp_path: Path) -> None:
    store = open_object_store(Settings(store={"backend": "local", "path": tmp_path / "elsewhere"}))

    assert isinstance(store, LocalObjectStore)
    assert store.root == (tmp_path / "elsewhere").resolve()


def test_s3_backend_without_endpoint_names_the_variable_to_set() -> None:
    with pytest.raises(ValueError, match="ASSAY_STORE__ENDPOINT"):
        open_object_store(Settings(store={"backend": "s3"}))


@pytest.mark.slow
def test_s3_backend_unwraps_secrets_and_works(seaweed: SeaweedServer) -> None:
    settings = Settings(
        store={
            "backend": "s3",
            "endpoint": seaweed.endpoint,
            "bucket": "factory-bucket",
            "access_key": seaweed.access_key,
            "secret_key": seaweed.secret_key,
            "secure": False,
            "prefix": "team",
        }
    )

    store = open_object_store(settings)
    store.put("k", b"v")

    assert isinstance(store, S3ObjectStore)
    assert store.describe() == f"s3://{seaweed.endpoint}/factory-bucket/team"
    assert seaweed.secret_key not in store.describe() and seaweed.secret_key not in repr(store)
    assert seaweed.client().get_object("factory-bucket", "team/k").read() == b"v"


@pytest.mark.slow
def test_s3_backend_reads_the_environment(seaweed: SeaweedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_STORE__BACKEND", "s3")
    monkeypatch.setenv("ASSAY_STORE__ENDPOINT", f"http://{seaweed.endpoint}")
    monkeypatch.setenv("ASSAY_STORE__BUCKET", "env-bucket")
    monkeypatch.setenv("ASSAY_STORE__ACCESS_KEY", seaweed.access_key)
    monkeypatch.setenv("ASSAY_STORE__SECRET_KEY", seaweed.secret_key)

    store = open_object_store(Settings())
    store.put("k", b"v")

    assert isinstance(store, S3ObjectStore)
    assert store.get("k") == b"v"
