"""This machine's record of the newest journal entry it wrote to each store, kept outside the stores.

A MAC chain proves every entry that is there; it cannot prove that none was cut off the end. Someone who
deletes the newest versions together with their journal entries leaves a shorter, perfectly valid chain.
The anchor remembers how far the chain went, so ``verify`` can tell.
"""

import os
import uuid
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import TypeAdapter, ValidationError

from assay.models.artifacts import JournalHead
from assay.storage.errors import StorageError

LOCK_TIMEOUT_S = 30.0
_HEADS = TypeAdapter(dict[str, JournalHead])


class HeadAnchor:
    """A JSON file mapping a store (``ArtifactStore.describe()``) to the newest entry written to it here."""

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser()

    def head(self, store_id: str) -> JournalHead | None:
        return self._read().get(store_id)

    def advance(self, store_id: str, head: JournalHead) -> None:
        """Record ``head`` unless a newer one is recorded; a file lock keeps concurrent writers' heads."""
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with FileLock(self.path.with_name(self.path.name + ".lock"), timeout=LOCK_TIMEOUT_S):
                heads = self._read()
                current = heads.get(store_id)
                if current is not None and current.seq >= head.seq:
                    return
                heads[store_id] = head
                self._write(heads)
        except Timeout as error:
            raise StorageError(f"journal anchor {self.path} stayed locked for {LOCK_TIMEOUT_S:.0f}s") from error
        except OSError as error:
            raise StorageError(f"cannot update journal anchor {self.path}: {error}") from error

    def _write(self, heads: dict[str, JournalHead]) -> None:
        """Replace the file atomically, readable only by its owner like the key next to it."""
        temp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}")
        try:
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(_HEADS.dump_json(heads, indent=2))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        finally:
            temp.unlink(missing_ok=True)

    def _read(self) -> dict[str, JournalHead]:
        try:
            return _HEADS.validate_json(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValidationError) as error:
            first = str(error).splitlines()[0]
            raise StorageError(f"unreadable journal anchor {self.path}: {first}") from error
