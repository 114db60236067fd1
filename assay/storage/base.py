"""The object store interface shared by the local-directory and S3 backends.

Keys are '/'-separated relative paths. Every backend validates them with :func:`validate_key`, so a key that
works on one backend works on all of them and can never escape the store (``..``, absolute paths).
"""

from abc import ABC, abstractmethod

_FORBIDDEN_SEGMENTS = {"", ".", ".."}


def validate_key(key: str) -> str:
    """Return ``key`` unchanged, or raise ``ValueError`` naming it and the rule it breaks."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"invalid object key {key!r}: expected a non-empty string")
    if "\\" in key:
        raise ValueError(f"invalid object key {key!r}: use '/' as separator, backslashes are not allowed")
    if key.startswith("/"):
        raise ValueError(f"invalid object key {key!r}: expected a relative path, not an absolute one")
    if "\x00" in key:
        raise ValueError(f"invalid object key {key!r}: NUL characters are not allowed")
    bad = [segment for segment in key.split("/") if segment in _FORBIDDEN_SEGMENTS]
    if bad:
        raise ValueError(
            f"invalid object key {key!r}: empty, '.' and '..' segments are not allowed (found {bad[0]!r})"
        )
    return key


def validate_prefix(prefix: str) -> str:
    """Validate a listing prefix: like a key, but it may be empty or end with '/'."""
    if prefix:
        validate_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


class ObjectStore(ABC):
    """A flat namespace of immutable-by-default byte objects.

    ``put`` refuses to replace an existing object unless asked, so layers above (the artifact store) can
    rely on create-only writes to claim names without locks. Portable layouts never store both ``a`` and
    ``a/b``: a local file cannot also be a directory.
    """

    @abstractmethod
    def put(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str = "application/octet-stream",
        overwrite: bool = False,
    ) -> None:
        """Store ``data`` at ``key``; raise ``ObjectExistsError`` if it exists and ``overwrite`` is False."""

    @abstractmethod
    def get(self, key: str, *, max_bytes: int | None = None) -> bytes:
        """Return the object's bytes; raise ``ObjectNotFoundError`` naming the key and the store, and
        ``ObjectTooLargeError`` without reading it all when it holds more than ``max_bytes``."""

    @abstractmethod
    def exists(self, key: str) -> bool:
        """Whether an object is stored under ``key``."""

    @abstractmethod
    def list(self, prefix: str = "") -> list[str]:
        """Sorted keys starting with ``prefix``, at any depth (a plain string prefix, as in S3)."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove the object; raise ``ObjectNotFoundError`` if there is none, so typos do not go unnoticed."""

    def foreign_objects(self, prefix: str = "") -> dict[str, str]:
        """Entries under ``prefix`` that are not plain objects, each with what it is: symbolic links and
        special files in a directory, directory markers in a bucket. Nothing an Assay writer makes, so
        ``verify`` reports them as tampering; ``get`` never follows or reads them."""
        validate_prefix(prefix)
        return {}

    @abstractmethod
    def describe(self) -> str:
        """Where the objects live, for humans and logs (``file:///...``, ``s3://...``); never credentials."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()!r})"
