"""An object store in a local directory, safe for concurrent writers on one machine."""

import contextlib
import os
import uuid
from pathlib import Path

from assay.storage.base import ObjectStore, validate_key, validate_prefix
from assay.storage.errors import ObjectExistsError, ObjectNotFoundError, StorageError

TEMP_PREFIX = ".assay-tmp-"


class LocalObjectStore(ObjectStore):
    """Objects are files under ``root``; the key is the path relative to it.

    Writes go to a temporary file in the destination directory which is fsynced and then *linked* to its
    final name: ``os.link`` fails if the name exists, which makes create-only writes atomic even between
    processes, and readers never see a half-written file. ``os.replace`` is used only for ``overwrite=True``.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser().resolve()

    def describe(self) -> str:
        return self.root.as_uri()

    def _path(self, key: str) -> Path:
        validate_key(key)
        if any(segment.startswith(TEMP_PREFIX) for segment in key.split("/")):
            raise ValueError(f"invalid object key {key!r}: names starting with {TEMP_PREFIX!r} are reserved")
        return self.root.joinpath(*key.split("/"))

    def _where(self, key: str) -> str:
        return f"{key!r} in {self.describe()}"

    def put(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str = "application/octet-stream",
        overwrite: bool = False,
    ) -> None:
        path = self._path(key)
        if path.is_dir():
            raise StorageError(f"cannot write object {self._where(key)}: a directory has that name")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageError(f"cannot create the folder of object {self._where(key)}: {error}") from error
        temp = path.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}")
        try:
            with open(temp, "xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if overwrite:
                os.replace(temp, path)
            else:
                os.link(temp, path)
            _fsync_directory(path.parent)
        except FileExistsError as error:
            raise ObjectExistsError(f"object {self._where(key)} already exists") from error
        except OSError as error:
            raise StorageError(f"cannot write object {self._where(key)}: {error}") from error
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()

    def get(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
            raise ObjectNotFoundError(f"no object {self._where(key)}") from error
        except OSError as error:
            raise StorageError(f"cannot read object {self._where(key)}: {error}") from error

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str = "") -> list[str]:
        validate_prefix(prefix)
        # Walk only the deepest directory the prefix fully names; the rest is a string match, as in S3.
        directory = prefix.rpartition("/")[0]
        start = self.root.joinpath(*directory.split("/")) if directory else self.root
        keys = []
        for dirpath, _dirnames, filenames in os.walk(start):
            relative = Path(dirpath).relative_to(self.root).as_posix()
            for filename in filenames:
                if filename.startswith(TEMP_PREFIX):
                    continue
                key = filename if relative == "." else f"{relative}/{filename}"
                if key.startswith(prefix):
                    keys.append(key)
        return sorted(keys)

    def delete(self, key: str) -> None:
        path = self._path(key)
        if not path.is_file():
            raise ObjectNotFoundError(f"cannot delete: no object {self._where(key)}")
        try:
            path.unlink()
        except FileNotFoundError as error:
            raise ObjectNotFoundError(f"cannot delete: no object {self._where(key)}") from error
        except OSError as error:
            raise StorageError(f"cannot delete object {self._where(key)}: {error}") from error


def _fsync_directory(directory: Path) -> None:
    """Persist the new directory entry too, so a crash right after ``put`` cannot lose the name."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
