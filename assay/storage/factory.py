"""Build the object store, the signer and the artifact store the settings ask for."""

from assay.config import Settings
from assay.storage.anchor import HeadAnchor
from assay.storage.artifacts import ArtifactStore
from assay.storage.base import ObjectStore
from assay.storage.local import LocalObjectStore
from assay.storage.signing import Signer


def open_object_store(settings: Settings) -> ObjectStore:
    """A ``LocalObjectStore`` at ``settings.store_path``, or an ``S3ObjectStore`` from ``settings.store``.

    Opening an S3 store contacts the server (it creates the bucket when missing), so a wrong endpoint or
    wrong credentials fail here with a ``StorageError`` rather than at the first write.
    """
    store = settings.store
    if store.backend == "local":
        return LocalObjectStore(settings.store_path)
    if not store.endpoint:
        raise ValueError(
            "the s3 store backend needs an endpoint: set ASSAY_STORE__ENDPOINT (or [store] endpoint in "
            "assay.toml) to host:port of the S3 server"
        )
    from assay.storage.s3 import S3ObjectStore  # minio costs a local run 0.2 s of imports

    return S3ObjectStore(
        store.endpoint,
        store.bucket,
        store.access_key.get_secret_value() if store.access_key else None,
        store.secret_key.get_secret_value() if store.secret_key else None,
        secure=store.secure,
        region=store.region,
        prefix=store.prefix,
    )


def open_signer(settings: Settings) -> Signer:
    """The signer of the artifact journal and lab checkpoints: the key named by ``store.signing_key_env``,
    else the file ``settings.signing_key_path``; the key is only read (or created) when first needed."""
    anchor = HeadAnchor(settings.journal_anchor_path)
    if settings.store.signing_key_env:
        return Signer(key_env=settings.store.signing_key_env, anchor=anchor)
    return Signer(key_file=settings.signing_key_path, anchor=anchor)


def open_artifact_store(settings: Settings) -> ArtifactStore:
    """The artifact store every writer and reader should use: journaled and signed as the settings say."""
    return ArtifactStore(open_object_store(settings), signer=open_signer(settings))
