"""The versioned artifact store: immutable, hash-checked versions of named files on any ``ObjectStore``.

Layout, under ``root``::

    <name>/v000001/<filename>       the content
    <name>/v000001/manifest.json    its ArtifactManifest; a version exists once this is written

Content is written before the manifest, so a manifest never points at missing content and readers treat
the manifest as the commit marker. Both writes are create-only: concurrent writers cannot replace each
other's versions, and whoever loses a race simply moves on to the next version number.
"""

import hashlib
import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from assay.models.artifacts import (
    ArtifactManifest,
    Producer,
    VerificationIssue,
    VerificationProblem,
    VerificationReport,
)
from assay.storage.base import ObjectStore, validate_key, validate_prefix
from assay.storage.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ObjectExistsError,
    ObjectNotFoundError,
    StorageError,
)

MANIFEST_FILENAME = "manifest.json"
MAX_PUT_ATTEMPTS = 100
_VERSION_DIR = re.compile(r"v\d{6,}")

# name -> version -> filenames stored in that version's directory
_Scan = dict[str, dict[int, set[str]]]


def validate_artifact_name(name: str) -> str:
    """Names are keys whose segments cannot be mistaken for version directories (``v`` + 6 digits)."""
    validate_key(name)
    for segment in name.split("/"):
        if _VERSION_DIR.fullmatch(segment):
            raise ValueError(
                f"invalid artifact name {name!r}: segment {segment!r} looks like a version directory"
            )
    return name


def _version_dir(version: int) -> str:
    return f"v{version:06d}"


class ArtifactStore:
    """Named artifacts with numbered, never-overwritten versions; see the module docstring for the layout."""

    def __init__(self, store: ObjectStore, root: str = "artifacts") -> None:
        self.store = store
        self.root = validate_key(root.strip("/"))

    def describe(self) -> str:
        return f"{self.store.describe()}/{self.root}"

    def _key(self, name: str, version: int, filename: str) -> str:
        return f"{self.root}/{name}/{_version_dir(version)}/{filename}"

    def put(
        self,
        name: str,
        data: bytes,
        *,
        filename: str,
        content_type: str,
        producer: Producer | None = None,
        metadata: dict[str, str] | None = None,
    ) -> ArtifactManifest:
        """Store ``data`` as a new version of ``name`` and return its manifest."""
        validate_artifact_name(name)
        validate_key(filename)
        if "/" in filename or filename == MANIFEST_FILENAME:
            raise ValueError(
                f"invalid artifact filename {filename!r}: expected one segment, not {MANIFEST_FILENAME!r}"
            )
        data = bytes(data)
        # Built (and so validated) before anything is written: bad metadata must not leave orphan content.
        draft = ArtifactManifest(
            name=name,
            version=1,
            filename=filename,
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            content_type=content_type,
            created_at=datetime.now(UTC),
            producer=producer or Producer(),
            metadata=metadata or {},
        )
        tried = 0
        for _ in range(MAX_PUT_ATTEMPTS):
            version = max(tried + 1, max(self._scan(name + "/").get(name, {}), default=0) + 1)
            tried = version
            content_key = self._key(name, version, filename)
            try:
                self.store.put(content_key, data, content_type=content_type)
            except ObjectExistsError:
                continue
            manifest = draft.model_copy(update={"version": version, "created_at": datetime.now(UTC)})
            try:
                self.store.put(
                    self._key(name, version, MANIFEST_FILENAME),
                    manifest.model_dump_json(indent=2).encode("utf-8"),
                    content_type="application/json",
                )
            except ObjectExistsError:
                # A writer with another filename committed this version first. The content object is ours
                # and uncommitted (no manifest names it), so removing it deletes no artifact.
                self.store.delete(content_key)
                continue
            return manifest
        raise StorageError(
            f"no free version of {name!r} in {self.describe()} after {MAX_PUT_ATTEMPTS} attempts"
        )

    def put_json(
        self,
        name: str,
        obj: dict[str, Any] | list[Any],
        *,
        filename: str | None = None,
        producer: Producer | None = None,
        metadata: dict[str, str] | None = None,
    ) -> ArtifactManifest:
        """Store ``obj`` as canonical JSON (sorted keys, so equal objects give equal hashes)."""
        if filename is None:
            last = name.rpartition("/")[2]
            filename = last if last.endswith(".json") else f"{last}.json"
        data = (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        return self.put(
            name,
            data,
            filename=filename,
            content_type="application/json",
            producer=producer,
            metadata=metadata,
        )

    def names(self, prefix: str = "") -> list[str]:
        """Names with at least one committed version, starting with ``prefix``."""
        scan = self._scan(validate_prefix(prefix))
        return sorted(name for name, versions in scan.items() if _committed(versions))

    def versions(self, name: str) -> list[ArtifactManifest]:
        """Every committed version of ``name``, oldest first."""
        validate_artifact_name(name)
        return [self._read_manifest(name, version) for version in _committed(self._versions_of(name))]

    def latest(self, name: str) -> ArtifactManifest:
        validate_artifact_name(name)
        committed = _committed(self._versions_of(name))
        if not committed:
            raise ArtifactNotFoundError(f"no artifact {name!r} in {self.describe()}")
        return self._read_manifest(name, committed[-1])

    def get(self, name: str, version: int | None = None) -> tuple[ArtifactManifest, bytes]:
        """The manifest and content of one version (the latest when ``version`` is None), hash-checked."""
        if version is None:
            manifest = self.latest(name)
        else:
            validate_artifact_name(name)
            committed = _committed(self._versions_of(name))
            if version not in committed:
                available = ", ".join(str(number) for number in committed) or "none"
                raise ArtifactNotFoundError(
                    f"no version {version} of artifact {name!r} in {self.describe()}; available: {available}"
                )
            manifest = self._read_manifest(name, version)
        key = self._key(name, manifest.version, manifest.filename)
        try:
            data = self.store.get(key)
        except ObjectNotFoundError as error:
            raise ArtifactIntegrityError(f"content {key!r} in {self.store.describe()} is missing") from error
        problem = _content_problem(manifest, data)
        if problem:
            raise ArtifactIntegrityError(
                f"{key!r} in {self.store.describe()} does not match its manifest: {problem[1]}"
            )
        return manifest, data

    def list(self, prefix: str = "") -> list[ArtifactManifest]:
        """The latest version of every artifact whose name starts with ``prefix``."""
        scan = self._scan(validate_prefix(prefix))
        return [
            self._read_manifest(name, _committed(versions)[-1])
            for name, versions in sorted(scan.items())
            if _committed(versions)
        ]

    def verify(self, prefix: str = "") -> VerificationReport:
        """Re-hash every version of every artifact under ``prefix``; problems are reported, never raised."""
        issues: list[VerificationIssue] = []
        checked = 0
        for name, versions in sorted(self._scan(validate_prefix(prefix)).items()):
            for version, filenames in sorted(versions.items()):
                checked += 1
                issue = self._verify_version(name, version, filenames)
                if issue:
                    issues.append(issue)
        return VerificationReport(checked=checked, issues=issues)

    def _verify_version(self, name: str, version: int, filenames: set[str]) -> VerificationIssue | None:
        def issue(problem: VerificationProblem, detail: str) -> VerificationIssue:
            return VerificationIssue(name=name, version=version, problem=problem, detail=detail)

        if MANIFEST_FILENAME not in filenames:
            found = ", ".join(sorted(filenames))
            return issue("missing_manifest", f"{self._key(name, version, '')} holds only: {found}")
        try:
            manifest = self._read_manifest(name, version)
        except StorageError as error:
            return issue("unreadable_manifest", str(error))
        key = self._key(name, version, manifest.filename)
        try:
            data = self.store.get(key)
        except ObjectNotFoundError:
            return issue("missing_content", f"{key} is named by the manifest but not stored")
        problem = _content_problem(manifest, data)
        return issue(*problem) if problem else None

    def _read_manifest(self, name: str, version: int) -> ArtifactManifest:
        key = self._key(name, version, MANIFEST_FILENAME)
        try:
            manifest = ArtifactManifest.model_validate_json(self.store.get(key))
        except ObjectNotFoundError as error:
            raise ArtifactNotFoundError(f"no manifest {key!r} in {self.store.describe()}") from error
        except ValidationError as error:
            raise StorageError(f"unreadable manifest {key!r} in {self.store.describe()}: {error}") from error
        if (manifest.name, manifest.version) != (name, version):
            raise StorageError(
                f"manifest {key!r} in {self.store.describe()} describes {manifest.name!r} "
                f"v{manifest.version}, not the artifact stored at that place"
            )
        return manifest

    def _versions_of(self, name: str) -> dict[int, set[str]]:
        return self._scan(name + "/").get(name, {})

    def _scan(self, name_prefix: str) -> _Scan:
        """Group the stored keys under ``root/name_prefix`` by artifact name and version directory."""
        found: _Scan = defaultdict(lambda: defaultdict(set))
        base = f"{self.root}/"
        for key in self.store.list(base + name_prefix):
            parts = key[len(base) :].split("/")
            if len(parts) < 3 or not _VERSION_DIR.fullmatch(parts[-2]):
                continue
            if any(_VERSION_DIR.fullmatch(segment) for segment in parts[:-2]):
                continue
            found["/".join(parts[:-2])][int(parts[-2][1:])].add(parts[-1])
        return found


def _committed(versions: dict[int, set[str]]) -> list[int]:
    """Version numbers whose manifest is written, ascending; others are in flight or were abandoned."""
    return sorted(version for version, filenames in versions.items() if MANIFEST_FILENAME in filenames)


def _content_problem(manifest: ArtifactManifest, data: bytes) -> tuple[VerificationProblem, str] | None:
    if len(data) != manifest.size:
        return "size_mismatch", f"manifest says {manifest.size} bytes, stored content has {len(data)}"
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.sha256:
        return "hash_mismatch", f"manifest says sha256 {manifest.sha256}, stored content hashes to {digest}"
    return None
