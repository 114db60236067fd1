"""Content-addressed on-disk cache of embeddings, keyed by (model id, text), stored compactly.

One SQLite row per vector cost one overflow page each (a 1.5 KB blob in a 4 KB page: the file was 2.8x its
content). Here the vectors of one write are one float32 blob (a batch row) and a small index maps each
32-byte key to (batch, row), so the file stays close to the raw vector bytes. SQLite still gives what a cache
shared by a flow, a guardrail and parallel tests needs: writers are serialised by ``BEGIN IMMEDIATE``, a batch
is written whole in the same transaction as its keys (readers never see a torn vector), and WAL lets readers
go on while one process writes. Older ``embeddings.sqlite3`` files are simply left alone.
"""

import hashlib
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

CACHE_FILE_NAME = "embeddings-v2.sqlite3"
_LOOKUP_CHUNK = 500
_WHOLE_BLOB_SHARE = 0.25
"""Above this share of a batch's rows wanted, reading the whole blob beats one small read per row."""


OPEN_WAIT_S = 60
"""How long opening the cache waits for another process holding it."""


def _switch_to_wal(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL, waiting while another process opens or switches it in the same moment: SQLite
    then answers "database is locked" at once, without its busy timeout (13 of 400 opens failed with four
    processes opening a fresh file together)."""
    deadline = time.monotonic() + OPEN_WAIT_S
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def text_key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


class EmbeddingCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(path, timeout=OPEN_WAIT_S, check_same_thread=False, isolation_level=None)
        _switch_to_wal(self._connection)
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS batches (id INTEGER PRIMARY KEY, dim INTEGER NOT NULL, vectors BLOB NOT NULL)"
        )
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS vector_index "
            "(key BLOB PRIMARY KEY, batch INTEGER NOT NULL, row INTEGER NOT NULL) WITHOUT ROWID"
        )

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the keys present; one read transaction, so a concurrent write is seen whole or not."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            self._connection.execute("BEGIN")
            try:
                by_batch: dict[int, list[tuple[str, int]]] = defaultdict(list)
                for start in range(0, len(keys), _LOOKUP_CHUNK):
                    chunk = [bytes.fromhex(key) for key in keys[start : start + _LOOKUP_CHUNK]]
                    placeholders = ",".join("?" * len(chunk))
                    rows = self._connection.execute(
                        f"SELECT key, batch, row FROM vector_index WHERE key IN ({placeholders})", chunk
                    )
                    for key, batch, row in rows:
                        by_batch[batch].append((key.hex(), row))
                for batch, wanted in by_batch.items():
                    found.update(self._read_batch(batch, wanted))
            finally:
                self._connection.execute("COMMIT")
        return found

    def _read_batch(self, batch: int, wanted: list[tuple[str, int]]) -> dict[str, np.ndarray]:
        dim, size = self._connection.execute(
            "SELECT dim, length(vectors) FROM batches WHERE id = ?", (batch,)
        ).fetchone()
        row_bytes = dim * 4
        if len(wanted) >= _WHOLE_BLOB_SHARE * (size // row_bytes):
            (blob,) = self._connection.execute("SELECT vectors FROM batches WHERE id = ?", (batch,)).fetchone()
            matrix = np.frombuffer(blob, dtype=np.float32).reshape(-1, dim)
            return {key: matrix[row] for key, row in wanted}
        found = {}
        with self._connection.blobopen("batches", "vectors", batch, readonly=True) as blob:
            for key, row in wanted:
                blob.seek(row * row_bytes)
                found[key] = np.frombuffer(blob.read(row_bytes), dtype=np.float32)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Append the vectors not stored yet as one batch, with their index rows, in one transaction."""
        pending = {key: np.asarray(vector, dtype=np.float32) for key, vector in items}
        if not pending:
            return
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                present = set()
                pending_keys = list(pending)
                for start in range(0, len(pending_keys), _LOOKUP_CHUNK):
                    chunk = [bytes.fromhex(key) for key in pending_keys[start : start + _LOOKUP_CHUNK]]
                    placeholders = ",".join("?" * len(chunk))
                    rows = self._connection.execute(
                        f"SELECT key FROM vector_index WHERE key IN ({placeholders})", chunk
                    )
                    present.update(key.hex() for (key,) in rows)
                fresh = [key for key in pending_keys if key not in present]
                if fresh:
                    matrix = np.stack([pending[key] for key in fresh])
                    batch = self._connection.execute(
                        "INSERT INTO batches (dim, vectors) VALUES (?, ?)", (matrix.shape[1], matrix.tobytes())
                    ).lastrowid
                    self._connection.executemany(
                        "INSERT INTO vector_index VALUES (?, ?, ?)",
                        [(bytes.fromhex(key), batch, row) for row, key in enumerate(fresh)],
                    )
                self._connection.execute("COMMIT")
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise

    def __len__(self) -> int:
        with self._lock:
            return self._connection.execute("SELECT COUNT(*) FROM vector_index").fetchone()[0]

    def close(self) -> None:
        self._connection.close()
