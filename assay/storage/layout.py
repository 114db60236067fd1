"""Where the artifact store puts things, and the checks that need only a manifest and the stored bytes.

Shared by the store and its verifier: ``<name>/v000001/<filename>`` plus ``manifest.json`` per version,
and the reserved ``_journal`` tree beside the artifacts.
"""

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

from assay.models.artifacts import ArtifactManifest, VerificationProblem
from assay.storage.base import validate_key
from assay.storage.journal import JOURNAL_DIR

MANIFEST_FILENAME = "manifest.json"
_VERSION_DIR = re.compile(r"v\d{6,}")

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
    """Group stored keys under ``base`` by artifact name and version directory; other keys are ignored."""
    found: Scan = defaultdict(lambda: defaultdict(set))
    for key in keys:
        parts = key[len(base) :].split("/")
        if parts[0] == JOURNAL_DIR or len(parts) < 3 or not _VERSION_DIR.fullmatch(parts[-2]):
            continue
        if any(_VERSION_DIR.fullmatch(segment) for segment in parts[:-2]):
            continue
        found["/".join(parts[:-2])][int(parts[-2][1:])].add(parts[-1])
    return found


def committed_versions(versions: dict[int, set[str]]) -> list[int]:
    """Version numbers whose manifest is written, ascending; others are in flight or were abandoned."""
    return sorted(version for version, filenames in versions.items() if MANIFEST_FILENAME in filenames)


def content_problem(manifest: ArtifactManifest, data: bytes) -> tuple[VerificationProblem, str] | None:
    if len(data) != manifest.size:
        return "size_mismatch", f"manifest says {manifest.size} bytes, stored content has {len(data)}"
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.sha256:
        return "hash_mismatch", f"manifest says sha256 {manifest.sha256}, stored content hashes to {digest}"
    return None
