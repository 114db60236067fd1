"""A content-addressed cache of judge replies: the key is a hash of everything that decides the reply
(endpoint model, template id, version and content hash, the exact messages, the reply schema, sampling
settings and the repeat number), so a rerun asks the judge nothing it has already answered.

Only parsed verdicts are stored: a failed call is asked again on the next run. One JSON file per entry,
written atomically, so concurrent runs and killed processes never leave a half-written entry.
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class JudgeCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(entry, file, ensure_ascii=False)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
