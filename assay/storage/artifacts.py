"""The versioned artifact store: immutable, hash-checked versions of named files on any ``ObjectStore``.

Layout, under ``root``::

    <name>/v000001/<filename>       the content
    <name>/v000001/manifest.json    its ArtifactManifest; a version exists once this is written
    _journal/...                    the signed journal of committed versions (see ``journal``)

Content is written before the manifest, so a manifest never points at missing content and readers treat
the manifest as the commit marker. Both writes are create-only: concurrent writers cannot replace each
other's versions, and whoever loses a race simply moves on to the next version number. Each manifest
links to the previous version's manifest, and with a ``Signer`` every commit is also journaled, so that
``verify`` catches deleted, added and re-hashed versions, not only edited content.
"""

import hashlib
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from assay.jsonio import pretty_json
from assay.models.artifacts import (
    MAX_ARTIFACT_BYTES,
    ArtifactManifest,
    JournalEntry,
    Producer,
    VerificationReport,
)
from assay.storage.base import ObjectStore, validate_key, validate_prefix
from assay.storage.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    ObjectExistsError,
    ObjectNotFoundError,
    ObjectTooLargeError,
    StorageError,
    UnsafeObjectError,
)
from assay.storage.journal import Journal
from assay.storage.layout import (
    MANIFEST_FILENAME,
    MAX_MANIFEST_BYTES,
    Scan,
    committed_versions,
    content_problem,
    group_versions,
    oversize_problem,
    read_content,
    validate_artifact_name,
    version_dir,
)
from assay.storage.rollback import refuse_rollback
from assay.storage.signing import Signer
from assay.storage.verification import verify_artifacts

__all__ = ["MANIFEST_FILENAME", "ArtifactStore", "validate_artifact_name"]

MAX_PUT_ATTEMPTS = 100


class ArtifactStore:
    """Named artifacts with numbered, never-overwritten versions; see the module docstring for the layout."""

    def __init__(self, store: ObjectStore, root: str = "artifacts", *, signer: Signer | None = None) -> None:
        self.store = store
        self.root = validate_key(root.strip("/"))
        self.signer = signer
        self.journal = Journal(store, self.root, signer, self.describe())

    def describe(self) -> str:
        return f"{self.store.describe()}/{self.root}"

    def object_key(self, name: str, version: int, filename: str) -> str:
        return f"{self.root}/{name}/{version_dir(version)}/{filename}"

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
        """Store ``data`` as a new version of ``name`` and return its manifest.

        A rerun of the same run (same non-empty ``producer.run_id``) that stores what that run already
        stored as the latest version gets that version back instead of a duplicate: a run killed after
        publishing and resumed must not publish twice. Different content is a real change: a new version.
        """
        validate_artifact_name(name)
        validate_key(filename)
        if "/" in filename or filename == MANIFEST_FILENAME:
            raise ValueError(f"invalid artifact filename {filename!r}: expected one segment, not {MANIFEST_FILENAME!r}")
        data = bytes(data)
        if len(data) > MAX_ARTIFACT_BYTES:
            limit = MAX_ARTIFACT_BYTES
            raise ValueError(f"artifact {name!r}: {len(data)} bytes, more than the {limit} a version may hold")
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
        if draft.producer.run_id:
            earlier = self._same_run_latest(draft)
            if earlier is not None:
                return earlier
        tried = 0
        for _ in range(MAX_PUT_ATTEMPTS):
            versions = self._versions_of(name)
            version = max(tried + 1, max(versions, default=0) + 1)
            tried = version
            content_key = self.object_key(name, version, filename)
            try:
                self.store.put(content_key, data, content_type=content_type)
            except ObjectExistsError:
                continue
            manifest = draft.model_copy(
                update={"version": version, "created_at": datetime.now(UTC), **self._link(name, version, versions)}
            )
            manifest_bytes = manifest.model_dump_json(indent=2).encode("utf-8")
            try:
                self.store.put(
                    self.object_key(name, version, MANIFEST_FILENAME), manifest_bytes, content_type="application/json"
                )
            except ObjectExistsError:
                # A writer with another filename committed this version first. The content object is ours
                # and uncommitted (no manifest names it), so removing it deletes no artifact.
                self.store.delete(content_key)
                continue
            if self.signer is not None:
                self.journal.append(manifest, hashlib.sha256(manifest_bytes).hexdigest())
            return manifest
        raise StorageError(f"no free version of {name!r} in {self.describe()} after {MAX_PUT_ATTEMPTS} attempts")

    def _link(self, name: str, version: int, versions: dict[int, set[str]]) -> dict[str, Any]:
        """The chain fields of a new version: the newest committed version below it and its manifest's hash."""
        for previous in reversed(committed_versions(versions)):
            if previous < version:
                try:
                    key = self.object_key(name, previous, MANIFEST_FILENAME)
                    raw = self.store.get(key, max_bytes=MAX_MANIFEST_BYTES)
                except ObjectNotFoundError:
                    continue
                return {"previous_version": previous, "previous_manifest_sha256": hashlib.sha256(raw).hexdigest()}
        return {}

    def _same_run_latest(self, draft: ArtifactManifest) -> ArtifactManifest | None:
        """The latest version when the same run already stored this content there, intact and journaled
        (journaling it now when its writer was killed in between); otherwise None."""
        committed = committed_versions(self._versions_of(draft.name))
        if not committed:
            return None
        try:
            latest, manifest_bytes = self.read_manifest_bytes(draft.name, committed[-1])
            data = read_content(self.store, self.object_key(draft.name, latest.version, latest.filename), latest)
        except StorageError:
            return None
        same_fields = ("producer", "sha256", "size", "filename", "content_type", "metadata")
        if any(getattr(latest, field) != getattr(draft, field) for field in same_fields):
            return None
        if content_problem(latest, data) is not None:
            return None
        manifest_sha256 = hashlib.sha256(manifest_bytes).hexdigest()
        entry = self.journal.find(latest.name, latest.version)
        if entry is None and self.signer is not None:
            self.journal.append(latest, manifest_sha256)
        elif entry is not None and (entry.manifest_sha256 != manifest_sha256 or self.journal.authentic(entry) is False):
            return None
        return latest

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
        data = pretty_json(obj, sort_keys=True).encode("utf-8")
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
        return sorted(name for name, versions in scan.items() if committed_versions(versions))

    def versions(self, name: str) -> list[ArtifactManifest]:
        """Every committed version of ``name``, oldest first."""
        validate_artifact_name(name)
        return [self._read_manifest(name, version) for version in committed_versions(self._versions_of(name))]

    def latest(self, name: str) -> ArtifactManifest:
        validate_artifact_name(name)
        committed = committed_versions(self._versions_of(name))
        if not committed:
            raise ArtifactNotFoundError(f"no artifact {name!r} in {self.describe()}")
        return self._read_manifest(name, committed[-1])

    def get(self, name: str, version: int | None = None) -> tuple[ArtifactManifest, bytes]:
        """The manifest and content of one version (the latest when ``version`` is None), checked against
        its manifest and, once the store is journaled, against its signed journal entry."""
        validate_artifact_name(name)
        committed = committed_versions(self._versions_of(name))
        asked_latest = version is None
        if version is None:
            if not committed:
                raise ArtifactNotFoundError(f"no artifact {name!r} in {self.describe()}")
            version = committed[-1]
        elif version not in committed:
            available = ", ".join(str(number) for number in committed) or "none"
            raise ArtifactNotFoundError(
                f"no version {version} of artifact {name!r} in {self.describe()}; available: {available}"
            )
        manifest, manifest_bytes = self.read_manifest_bytes(name, version)
        key = self.object_key(name, manifest.version, manifest.filename)
        try:
            data = read_content(self.store, key, manifest)
        except ObjectNotFoundError as error:
            raise ArtifactIntegrityError(f"content {key!r} in {self.store.describe()} is missing") from error
        except ObjectTooLargeError as error:
            data, problem = b"", oversize_problem(manifest, error)
        except UnsafeObjectError as error:
            raise ArtifactIntegrityError(str(error)) from error
        else:
            problem = content_problem(manifest, data)
        if problem:
            raise ArtifactIntegrityError(
                f"{key!r} in {self.store.describe()} does not match its manifest: {problem[1]}"
            )
        entry = self._check_journaled(manifest, manifest_bytes)
        if asked_latest:
            refuse_rollback(self.journal, manifest, entry, self.describe())
        return manifest, data

    def _check_journaled(self, manifest: ArtifactManifest, manifest_bytes: bytes) -> JournalEntry | None:
        """The version's journal entry once it vouches for the manifest; None when nothing is journaled."""
        where = f"{manifest.name!r} v{manifest.version} in {self.describe()}"
        entry = self.journal.find(manifest.name, manifest.version)
        if entry is None:
            if self.journal_in_use():
                raise ArtifactIntegrityError(
                    f"{where} has no journal entry: it was not written by Assay with the signing key (or its "
                    "writer was killed before journaling it); run 'assay artifacts verify'"
                )
            return None
        if self.journal.authentic(entry) is False:
            raise ArtifactIntegrityError(
                f"journal entry {entry.seq} of {where} is not signed by the {self.journal.signer_name()}"
            )
        if entry.manifest_sha256 != hashlib.sha256(manifest_bytes).hexdigest():
            raise ArtifactIntegrityError(
                f"the manifest of {where} does not match its journal entry {entry.seq}: it was rewritten"
            )
        return entry

    def journal_in_use(self) -> bool:
        """Every version must be journaled once a signing key exists or anything was journaled."""
        return (self.signer is not None and self.signer.has_key()) or not self.journal.is_empty()

    def list(self, prefix: str = "") -> list[ArtifactManifest]:
        """The latest version of every artifact whose name starts with ``prefix``."""
        scan = self._scan(validate_prefix(prefix))
        return [
            self._read_manifest(name, committed_versions(versions)[-1])
            for name, versions in sorted(scan.items())
            if committed_versions(versions)
        ]

    def verify(self, prefix: str = "") -> VerificationReport:
        """Check every version under ``prefix`` against its manifest, its chain and the journal; problems
        are reported, never raised, and what could not be checked is said in ``unchecked``."""
        return verify_artifacts(self, validate_prefix(prefix))

    def _read_manifest(self, name: str, version: int) -> ArtifactManifest:
        return self.read_manifest_bytes(name, version)[0]

    def read_manifest_bytes(self, name: str, version: int) -> tuple[ArtifactManifest, bytes]:
        key = self.object_key(name, version, MANIFEST_FILENAME)
        try:
            raw = self.store.get(key, max_bytes=MAX_MANIFEST_BYTES)
            manifest = ArtifactManifest.model_validate_json(raw)
        except ObjectNotFoundError as error:
            raise ArtifactNotFoundError(f"no manifest {key!r} in {self.store.describe()}") from error
        except ObjectTooLargeError as error:
            raise StorageError(f"unreadable manifest: {error}") from error
        except ValidationError as error:
            raise StorageError(f"unreadable manifest {key!r} in {self.store.describe()}: {error}") from error
        if (manifest.name, manifest.version) != (name, version):
            raise StorageError(
                f"manifest {key!r} in {self.store.describe()} describes {manifest.name!r} "
                f"v{manifest.version}, not the artifact stored at that place"
            )
        return manifest, raw

    def _versions_of(self, name: str) -> dict[int, set[str]]:
        return self._scan(name + "/").get(name, {})

    def _scan(self, name_prefix: str) -> Scan:
        """Group the stored keys under ``root/name_prefix`` by artifact name and version directory."""
        return group_versions(self.store.list(f"{self.root}/{name_prefix}"), f"{self.root}/")
