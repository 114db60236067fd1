"""Where the artifact store puts things, and the checks that need only a manifest and the stored bytes.

Shared by the store and its verifier: ``<name>/v000001/<filename>`` plus ``manifest.json`` per version,
and the reserved ``_journal`` tree beside the artifacts.
"""

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

from assay.models.artifacts import ArtifactManifest, VerificationProblem
from assay.storage.base import ObjectStore, validate_key
from assay.storage.errors import ObjectTooLargeError
from assay.storage.journal import JOURNAL_DIR

MANIFEST_FILENAME = "manifest.json"
# Manifests are a few hundred bytes (metadata included); a bigger one is read no further than this.
MAX_MANIFEST_BYTES = 1 << 20
_VERSION_DIR = re.compile(r"v\d{6,}")
_JOURNAL_KEY = re.compile(rf"{JOURNAL_DIR}/(entries/\d{{12}}\.json|index/.+/v\d{{6,}})")

# name -> version -> filenames stored in that version's directory
Scan = dict[str, dict[int, set[str]]]


def validate_artifact_name(name: str) -> str:
    """Names are keys whose segments cannot be mistaken for version directories (``v`` + 6 digits) and
    that do not start with the journal's directory."""
    validate_key(name)
    if name.split("/")[0] == JOURNAL_DIR:
        raise ValueError(f"invalid artifact name {name!r}: {JOURNAL_DIR!r} is reserved for the journal")
    for segment in name.split("/"):
        if _VERSION_DIR.fullmatch(segment):
            raise ValueError(f"invalid artifact name {name!r}: segment {segment!r} looks like a version directory")
    return name


def version_dir(version: int) -> str:
    return f"v{version:06d}"


def group_versions(keys: Iterable[str], base: str) -> Scan:
    """Group stored keys under ``base`` by artifact name and version directory; keys outside that layout
    (the journal's, and any ``layout_problem`` names) are ignored."""
    found: Scan = defaultdict(lambda: defaultdict(set))
    for key in keys:
        relative = key[len(base) :]
        if relative.split("/")[0] == JOURNAL_DIR or layout_problem(relative) is not None:
            continue
        parts = relative.split("/")
        found["/".join(parts[:-2])][int(parts[-2][1:])].add(parts[-1])
    return found


def layout_problem(relative: str) -> str | None:
    """Why a key (relative to the store's root) is not one the store writes, or None when it is: a version's
    file ``<name>/v000001/<filename>``, a journal entry or an index hint of the journal."""
    try:
        validate_key(relative)
    except ValueError as error:
        return str(error)
    parts = relative.split("/")
    if parts[0] == JOURNAL_DIR:
        if _JOURNAL_KEY.fullmatch(relative):
            return None
        return f"{relative!r} is in the journal's folder but is neither an entry nor an index hint"
    if len(parts) < 3 or not _VERSION_DIR.fullmatch(parts[-2]):
        return f"{relative!r} is not inside a version folder (<name>/v000001/<file>)"
    if any(_VERSION_DIR.fullmatch(segment) for segment in parts[:-2]):
        return f"{relative!r} has a version folder inside the artifact's name"
    return None


def committed_versions(versions: dict[int, set[str]]) -> list[int]:
    """Version numbers whose manifest is written, ascending; others are in flight or were abandoned."""
    return sorted(version for version, filenames in versions.items() if MANIFEST_FILENAME in filenames)


def read_content(store: ObjectStore, key: str, manifest: ArtifactManifest) -> bytes:
    """The stored content of a version, read no further than its manifest's size: a bigger object raises
    ``ObjectTooLargeError``, which ``content_problem`` callers report as a size mismatch."""
    return store.get(key, max_bytes=manifest.size)


def oversize_problem(manifest: ArtifactManifest, error: ObjectTooLargeError) -> tuple[VerificationProblem, str]:
    stored = f"{error.size} bytes" if error.size is not None else "more"
    return "size_mismatch", f"manifest says {manifest.size} bytes, stored content has {stored}"


def content_problem(manifest: ArtifactManifest, data: bytes) -> tuple[VerificationProblem, str] | None:
    if len(data) != manifest.size:
        return "size_mismatch", f"manifest says {manifest.size} bytes, stored content has {len(data)}"
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.sha256:
        return "hash_mismatch", f"manifest says sha256 {manifest.sha256}, stored content hashes to {digest}"
    return None
