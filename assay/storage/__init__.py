"""Object storage (local directory or S3) and the versioned artifact store built on it."""

from assay.storage.artifacts import ArtifactStore, validate_artifact_name
from assay.storage.base import ObjectStore, validate_key
from assay.storage.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ObjectExistsError,
    ObjectNotFoundError,
    StorageError,
)
from assay.storage.factory import open_artifact_store, open_object_store, open_signer
from assay.storage.local import LocalObjectStore
from assay.storage.signing import Signer

__all__ = [
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "ArtifactStore",
    "LocalObjectStore",
    "ObjectExistsError",
    "ObjectNotFoundError",
    "ObjectStore",
    "S3ObjectStore",
    "Signer",
    "StorageError",
    "open_artifact_store",
    "open_object_store",
    "open_signer",
    "validate_artifact_name",
    "validate_key",
]


def __getattr__(name: str) -> object:
    """``S3ObjectStore`` is imported on first use: minio costs every local command 0.2 s of imports."""
    if name == "S3ObjectStore":
        from assay.storage.s3 import S3ObjectStore

        return S3ObjectStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
