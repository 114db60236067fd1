"""Errors raised by object stores and the artifact store.

Every backend raises these and nothing else for storage failures, so callers never need to know whether
they talk to a directory or to an S3 server.
"""


class StorageError(Exception):
    """A storage operation failed; the message names the store and the key at fault."""


class ObjectExistsError(StorageError):
    """A write refused to replace an existing object (``overwrite=False``)."""


class ObjectNotFoundError(StorageError):
    """The key names no object in the store."""


class ArtifactNotFoundError(StorageError):
    """No committed version of the artifact (or not the one asked for); the message lists what exists."""


class ArtifactIntegrityError(StorageError):
    """A stored artifact no longer matches its manifest: content changed, truncated or gone."""
