"""Content-addressed on-disk cache of embeddings, keyed by (model id, text).

SQLite rather than one file per text: a warm lookup of thousands of vectors is one indexed query per
few hundred keys instead of thousands of file opens, and concurrent writers are serialised safely.
"""

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

_LOOKUP_CHUNK = 500


def text_key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


class EmbeddingCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, dim INTEGER, vector BLOB) WITHOUT ROWID"
        )
        self._connection.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            placeholders = ",".join("?" * len(chunk))
            rows = self._connection.execute(
                f"SELECT key, vector FROM embeddings WHERE key IN ({placeholders})", chunk
            )
            for key, blob in rows:
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [
            (key, int(vector.shape[0]), np.asarray(vector, dtype=np.float32).tobytes())
            for key, vector in items
        ]
        with self._connection:
            self._connection.executemany("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        return self._connection.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]

    def close(self) -> None:
        self._connection.close()
