"""An object store in an S3-compatible bucket (AWS S3, MinIO, SeaweedFS), through the ``minio`` client."""

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import urllib3
from minio import Minio
from minio.error import MinioException, S3Error

from assay.storage.base import ObjectStore, validate_key, validate_prefix
from assay.storage.errors import ObjectExistsError, ObjectNotFoundError, ObjectTooLargeError, StorageError

_NOT_FOUND_CODES = {"NoSuchKey", "NoSuchObject", "ResourceNotFound"}
# 412 when the key exists; AWS answers 409 while another conditional write to the key is in flight.
_EXISTS_CODES = {"PreconditionFailed", "ConditionalRequestConflict"}
_BUCKET_RACE_CODES = {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}


class S3ObjectStore(ObjectStore):
    """Objects live in ``bucket`` under ``prefix``; the bucket is created when missing.

    Create-only writes (``overwrite=False``) first stat the key, then upload with ``If-None-Match: *`` so the
    server itself refuses to replace an object created in between. SeaweedFS 4.48 (``weed mini``) honours
    the header: a PUT on an existing key answers 412 PreconditionFailed, and of 8 threads racing to create one
    key exactly one succeeds (tests/storage checks both). AWS S3 documents the same conditional write. On a
    server that ignores the header, the stat check still refuses, but two writers racing between stat and
    PUT could both succeed.

    ``minio.Minio.put_object`` turns unknown headers into ``x-amz-meta-*`` user metadata, so the upload goes
    through its single-request ``_put_object``: fine for artifacts, which stay far below the 5 GiB limit of
    one PUT.
    """

    def __init__(
        self,
        endpoint: str,
        bucket: str,
        access_key: str | None,
        secret_key: str | None,
        *,
        secure: bool = True,
        region: str | None = None,
        prefix: str = "",
        create_bucket: bool = True,
    ) -> None:
        """``create_bucket`` False: a missing bucket is an error (a reader must not create what it reads)."""
        host, secure = _split_endpoint(endpoint, secure)
        self.endpoint = host
        self.bucket = bucket
        self.secure = secure
        stripped = prefix.strip("/")
        self.prefix = f"{validate_key(stripped)}/" if stripped else ""
        try:
            self._client = Minio(
                host, access_key=access_key, secret_key=secret_key, secure=secure, region=region
            )
        except ValueError as error:
            raise ValueError(f"invalid S3 endpoint {endpoint!r} or bucket {bucket!r}: {error}") from error
        self._ensure_bucket(create_bucket)

    def describe(self) -> str:
        return f"s3://{self.endpoint}/{self.bucket}/{self.prefix}".rstrip("/")

    def _ensure_bucket(self, create: bool = True) -> None:
        with self._errors("create bucket", ""):
            if self._client.bucket_exists(self.bucket):
                return
            if not create:
                raise StorageError(f"no bucket {self.bucket!r} on {self.endpoint}")
            try:
                self._client.make_bucket(self.bucket)
            except S3Error as error:
                if error.code not in _BUCKET_RACE_CODES:
                    raise

    def _object_name(self, key: str) -> str:
        return self.prefix + validate_key(key)

    @contextmanager
    def _errors(self, operation: str, key: str) -> Iterator[None]:
        """Turn client and transport errors into ``StorageError`` naming the endpoint, bucket and key.

        Messages are built from the error code and text only: the client never puts credentials in them,
        and neither do we.
        """
        where = f"{self.describe()}/{key}" if key else self.describe()
        try:
            yield
        except StorageError:
            raise
        except S3Error as error:
            raise StorageError(f"S3 {operation} failed for {where}: {error.code}: {error.message}") from error
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as error:
            raise StorageError(
                f"S3 {operation} failed for {where}: {type(error).__name__}: {error}"
            ) from error

    def _stat_exists(self, key: str) -> bool:
        with self._errors("stat", key):
            try:
                self._client.stat_object(self.bucket, self._object_name(key))
            except S3Error as error:
                if error.code in _NOT_FOUND_CODES:
                    return False
                raise
        return True

    def put(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str = "application/octet-stream",
        overwrite: bool = False,
    ) -> None:
        name = self._object_name(key)
        headers = {"Content-Type": content_type}
        if not overwrite:
            if self._stat_exists(key):
                raise ObjectExistsError(f"object {key!r} already exists in {self.describe()}")
            headers["If-None-Match"] = "*"
        with self._errors("put", key):
            try:
                self._client._put_object(self.bucket, name, bytes(data), headers=headers)
            except S3Error as error:
                if not overwrite and error.code in _EXISTS_CODES:
                    raise ObjectExistsError(f"object {key!r} already exists in {self.describe()}") from error
                raise

    def get(self, key: str, *, max_bytes: int | None = None) -> bytes:
        name = self._object_name(key)
        with self._errors("get", key):
            try:
                response = self._client.get_object(self.bucket, name)
            except S3Error as error:
                if error.code in _NOT_FOUND_CODES:
                    raise ObjectNotFoundError(f"no object {key!r} in {self.describe()}") from error
                raise
            try:
                if max_bytes is None:
                    return response.read()
                length = response.headers.get("Content-Length")
                if length is not None and length.isdigit() and int(length) > max_bytes:
                    raise ObjectTooLargeError(
                        f"object {key!r} in {self.describe()} holds {length} bytes, more than the {max_bytes} "
                        "expected",
                        int(length),
                    )
                data = response.read(max_bytes + 1)
                if len(data) > max_bytes:
                    raise ObjectTooLargeError(
                        f"object {key!r} in {self.describe()} holds more than the {max_bytes} bytes expected"
                    )
                return data
            finally:
                response.close()
                response.release_conn()

    def exists(self, key: str) -> bool:
        return self._stat_exists(key)

    def _names(self, prefix: str) -> list[str]:
        """Every object name under ``prefix``, relative to the store's own prefix."""
        validate_prefix(prefix)
        with self._errors("list", prefix):
            objects = self._client.list_objects(self.bucket, prefix=self.prefix + prefix, recursive=True)
            names = [obj.object_name for obj in objects if obj.object_name]
        return [name[len(self.prefix) :] for name in names]

    def list(self, prefix: str = "") -> list[str]:
        return sorted(name for name in self._names(prefix) if not name.endswith("/"))

    def foreign_objects(self, prefix: str = "") -> dict[str, str]:
        """Directory markers (keys ending with '/', which no Assay writer makes and ``list`` leaves out)."""
        return {
            name: "a directory marker object (a key ending with '/'), which Assay never writes"
            for name in self._names(prefix)
            if name.endswith("/")
        }

    def delete(self, key: str) -> None:
        if not self._stat_exists(key):
            raise ObjectNotFoundError(f"cannot delete: no object {key!r} in {self.describe()}")
        with self._errors("delete", key):
            self._client.remove_object(self.bucket, self._object_name(key))


def _split_endpoint(endpoint: str, secure: bool) -> tuple[str, bool]:
    """Accept ``host:port`` or a URL; an ``http://``/``https://`` scheme decides ``secure`` on its own."""
    if "://" not in endpoint:
        return endpoint.rstrip("/"), secure
    parts = urlsplit(endpoint)
    if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path.strip("/"):
        raise ValueError(f"invalid S3 endpoint {endpoint!r}: expected host[:port] or http(s)://host[:port]")
    if "@" in parts.netloc:
        raise ValueError("invalid S3 endpoint: credentials belong in access_key/secret_key, not in the URL")
    return parts.netloc, parts.scheme == "https"
