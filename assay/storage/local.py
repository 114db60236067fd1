"""An object store in a local directory, safe for concurrent writers on one machine."""

import contextlib
import os
import stat
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from assay.storage.base import ObjectStore, validate_key, validate_prefix
from assay.storage.errors import (
    ObjectExistsError,
    ObjectNotFoundError,
    ObjectTooLargeError,
    StorageError,
    UnsafeObjectError,
)

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
        self._refuse_linked_folders(key)
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

    def get(self, key: str, *, max_bytes: int | None = None) -> bytes:
        try:
            with self._open_plain(key) as handle:
                size = os.fstat(handle.fileno()).st_size
                if max_bytes is not None and size > max_bytes:
                    raise ObjectTooLargeError(
                        f"object {self._where(key)} holds {size} bytes, more than the {max_bytes} expected", size
                    )
                data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
            raise ObjectNotFoundError(f"no object {self._where(key)}") from error
        except OSError as error:
            raise StorageError(f"cannot read object {self._where(key)}: {error}") from error
        if max_bytes is not None and len(data) > max_bytes:  # it grew after the size check
            raise ObjectTooLargeError(f"object {self._where(key)} holds more than the {max_bytes} bytes expected")
        return data

    def _open_plain(self, key: str) -> BinaryIO:
        """Open the regular file of ``key`` without following a symbolic link at any level of its path and
        without opening anything else (a FIFO would block, ``/dev/zero`` never ends): those raise
        ``UnsafeObjectError`` naming the path. Each directory is opened relative to its parent's descriptor."""
        self._path(key)
        *folders, filename = key.split("/")
        directory = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for depth, folder in enumerate(folders):
                self._refuse_unless(key, depth, os.stat(folder, dir_fd=directory, follow_symlinks=False), stat.S_ISDIR)
                opened = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
                os.close(directory)
                directory = opened
            depth = len(folders)
            self._refuse_unless(key, depth, os.stat(filename, dir_fd=directory, follow_symlinks=False), stat.S_ISREG)
            opened = os.open(filename, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
            os.close(directory)
            directory = opened
            self._refuse_unless(key, depth, os.fstat(directory), stat.S_ISREG)  # replaced since the check
            os.set_blocking(directory, True)
            return os.fdopen(directory, "rb")
        except BaseException:
            os.close(directory)
            raise

    def _refuse_unless(self, key: str, depth: int, found: os.stat_result, expected: Callable[[int], bool]) -> None:
        """Raise unless the entry at ``depth`` of ``key``'s path is what the layout puts there: a directory
        where the path goes on, a regular file at its end (a directory there is simply not an object)."""
        if expected(found.st_mode):
            return
        path = self.root.joinpath(*key.split("/")[: depth + 1])
        if stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode):
            raise FileNotFoundError(str(path))
        raise UnsafeObjectError(
            f"object {self._where(key)}: {path} is {_describe(path, found.st_mode)}: refused, never followed "
            "or read (tampering? run 'assay artifacts verify')"
        )

    def _linked_folder(self, folders: str) -> Path | None:
        """The first of the '/'-separated ``folders`` (under the root) that is a symbolic link, if any."""
        path = self.root
        for folder in filter(None, folders.split("/")):
            path = path / folder
            if path.is_symlink():
                return path
        return None

    def _refuse_linked_folders(self, key: str) -> None:
        """A write or delete through a symbolic link to a folder would land outside the store."""
        linked = self._linked_folder(key.rpartition("/")[0])
        if linked is not None:
            raise UnsafeObjectError(
                f"cannot write or delete object {self._where(key)}: {linked} is {_describe(linked, stat.S_IFLNK)}"
            )

    def exists(self, key: str) -> bool:
        """Whether ``key`` names an entry; a symbolic link or special file counts (``get`` refuses it)."""
        try:
            with self._open_plain(key):
                return True
        except UnsafeObjectError:
            return True
        except OSError:
            return False

    def list(self, prefix: str = "") -> list[str]:
        """Keys of every non-directory entry, symbolic links and special files included: they are named
        there so that ``get`` refuses them and ``verify`` reports them, never skipped in silence."""
        return sorted(key for key, _ in self._entries(prefix))

    def foreign_objects(self, prefix: str = "") -> dict[str, str]:
        return {key: what for key, what in self._entries(prefix, foreign=True)}

    def _entries(self, prefix: str, *, foreign: bool = False) -> Iterator[tuple[str, str]]:
        """(key, what) of each entry under ``prefix``: every non-directory, or (``foreign``) only symbolic
        links (to folders too, which are never entered) and special files."""
        validate_prefix(prefix)
        # Walk only the deepest directory the prefix fully names; the rest is a string match, as in S3.
        directory = prefix.rpartition("/")[0]
        start = self.root.joinpath(*directory.split("/")) if directory else self.root
        linked = self._linked_folder(directory)
        if linked is not None:  # os.walk would follow it
            if foreign:
                yield linked.relative_to(self.root).as_posix(), _describe(linked, stat.S_IFLNK)
            return
        for dirpath, dirnames, filenames in os.walk(start):
            relative = Path(dirpath).relative_to(self.root).as_posix()
            for name in [*dirnames, *filenames]:
                if name.startswith(TEMP_PREFIX):
                    continue
                key = name if relative == "." else f"{relative}/{name}"
                if not key.startswith(prefix):
                    continue
                path = Path(dirpath, name)
                try:
                    mode = path.lstat().st_mode
                except FileNotFoundError:  # removed during the walk
                    continue
                if stat.S_ISDIR(mode) or (foreign and stat.S_ISREG(mode)):
                    continue
                yield key, _describe(path, mode) if foreign else ""

    def delete(self, key: str) -> None:
        path = self._path(key)
        self._refuse_linked_folders(key)
        if not (path.is_file() or path.is_symlink()):
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


_KINDS = {
    stat.S_ISFIFO: "a FIFO (named pipe)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def _describe(path: Path, mode: int) -> str:
    """What a non-plain entry is, for a message: a link says where it points."""
    if stat.S_ISLNK(mode):
        return f"a symbolic link (to {os.readlink(path)})"
    return next((what for test, what in _KINDS.items() if test(mode)), "not a regular file")
