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


class UnsafeObjectError(StorageError):
    """A stored entry is not a plain object: a symbolic link or a special file (FIFO, device, socket) in a
    local store. It is never followed or read: following a link to ``/dev/zero`` would read forever."""


class ObjectTooLargeError(StorageError):
    """An object is larger than the caller allowed (its manifest's size, or a limit on manifests and
    journal entries); ``size`` is its stored size when the store could tell, else None."""

    def __init__(self, message: str, size: int | None = None) -> None:
        super().__init__(message)
        self.size = size
