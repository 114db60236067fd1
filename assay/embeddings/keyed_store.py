"""A small on-disk cache of JSON values under hashed keys, for work that is deterministic in its inputs.

Sentence splits and model-based pair scores (BERTScore) cost milliseconds an item and recur across runs of
the same lab and across the MRM steps; recomputing them dominated warm runs. SQLite (WAL) lets parallel
processes share the file; reads are one indexed lookup, writes are batched. It is a cache: a failed write only
costs recomputing later, and a caller puts every input that changes the value (versions, model identity)
into the key.
"""

import atexit
import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

_FLUSH_EVERY = 1000
SCORE_STORE_FILE = "scores-v1.sqlite3"
"""The file, in the cache folder, of evaluators' stored scores (``Services.score_store``)."""


def hashed_key(*parts: str) -> bytes:
    """A 32-byte key of ``parts`` (joined with NUL, which no part may contain ambiguously)."""
    return hashlib.sha256("\0".join(parts).encode()).digest()


class KeyedJsonStore:
    """JSON values under 32-byte keys in one SQLite table, read one key at a time and written in batches."""

    def __init__(self, path: Path, table: str, value_column: str = "value") -> None:
        if not (table.isidentifier() and value_column.isidentifier()):
            raise ValueError(f"table {table!r} and column {value_column!r} must be identifiers")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self._table, self._column = path, table, value_column
        self._lock = threading.Lock()
        self._pending: dict[bytes, str] = {}
        self._connection = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (key BLOB PRIMARY KEY, {value_column} TEXT) WITHOUT ROWID"
        )
        atexit.register(self.flush)

    def get(self, key: bytes) -> Any | None:
        """The value stored under ``key``, or None (store no bare None: wrap it)."""
        with self._lock:
            if key in self._pending:
                return json.loads(self._pending[key])
            row = self._connection.execute(f"SELECT {self._column} FROM {self._table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: bytes, value: Any) -> None:
        with self._lock:
            self._pending[key] = json.dumps(value, ensure_ascii=False)
            full = len(self._pending) >= _FLUSH_EVERY
        if full:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            rows, self._pending = list(self._pending.items()), {}
            try:
                self._connection.execute("BEGIN IMMEDIATE")
                self._connection.executemany(f"INSERT OR IGNORE INTO {self._table} VALUES (?, ?)", rows)
                self._connection.execute("COMMIT")
            except sqlite3.Error:  # a cache: a failed write only costs a later recomputation
                if self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")
