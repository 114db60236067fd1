"""A content-addressed cache of judge replies: the key is a hash of everything that decides the reply
(template id, version and content hash, the inputs, the reply schema, sampling settings and the repeat
number), within the scope of one endpoint (base URL, model or Azure deployment, API version): a rerun asks
the judge nothing it has already answered, and another endpoint serving a model of the same name is asked
itself, never credited with the first one's verdicts.

Only parsed verdicts are stored: a failed call is asked again on the next run. One JSON file per entry,
written atomically, so concurrent runs and killed processes never leave a half-written entry.
"""

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.atomic import write_atomic

if TYPE_CHECKING:
    from assay.models.judges import JudgeEndpoint


def cache_key(parts: dict[str, Any]) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def endpoint_scope(endpoint: "JudgeEndpoint") -> dict[str, Any]:
    """What tells one judge endpoint from another: the same model name at two URLs is two judges."""
    return {
        "base_url": endpoint.base_url.strip().rstrip("/"),
        "model": endpoint.model.strip(),
        "azure_api_version": endpoint.azure_api_version,
    }


class JudgeCache:
    def __init__(self, folder: Path, scope: dict[str, Any] | None = None) -> None:
        self.folder = folder
        self.scope = scope

    def scoped(self, scope: dict[str, Any]) -> "JudgeCache":
        """The same folder, with every key taken within ``scope`` (an endpoint, see ``endpoint_scope``)."""
        return JudgeCache(self.folder, scope)

    def _path(self, key: str) -> Path:
        if self.scope is not None:
            key = cache_key({"scope": self.scope, "key": key})
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        write_atomic(self._path(key), json.dumps(entry, ensure_ascii=False))
