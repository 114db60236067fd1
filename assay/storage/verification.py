"""``ArtifactStore.verify``: every way a stored version can disagree with itself, its chain or the journal.

A version is checked against its manifest (content hash and size, no stray files), against the version it
links to (the chain), and against its journal entry (manifest hash). The journal is checked against its
signing key, its own links and this machine's anchor of its head. A journal entry whose version is gone is
a deleted version; a version with no entry was added behind Assay's back (or its writer died before
journaling it). What cannot be checked, for want of a key, a journal or an anchor, is said, never assumed.
"""

import hashlib
from collections import defaultdict
from typing import Protocol

from assay.models.artifacts import (
    ArtifactManifest,
    JournalEntry,
    VerificationIssue,
    VerificationProblem,
    VerificationReport,
)
from assay.storage.base import ObjectStore
from assay.storage.errors import ObjectNotFoundError, ObjectTooLargeError, StorageError, UnsafeObjectError
from assay.storage.journal import Journal
from assay.storage.layout import (
    MANIFEST_FILENAME,
    MAX_MANIFEST_BYTES,
    Scan,
    content_problem,
    group_versions,
    layout_problem,
    oversize_problem,
    read_content,
)
from assay.storage.run_state_check import check_run_states
from assay.storage.signing import Signer


class StoredVersions(Protocol):
    """What verification reads of an artifact store (``ArtifactStore`` is one): declared here so that the
    store can call in without the two modules importing each other."""

    store: ObjectStore
    root: str
    signer: Signer | None
    journal: Journal

    def describe(self) -> str: ...

    def journal_in_use(self) -> bool: ...

    def object_key(self, name: str, version: int, filename: str) -> str: ...

    def read_manifest_bytes(self, name: str, version: int) -> tuple[ArtifactManifest, bytes]: ...


def verify_artifacts(artifacts: StoredVersions, prefix: str) -> VerificationReport:
    """Check every version under ``prefix``, the whole journal, what else the store holds there and the
    signed run states; see the module docstring."""
    journal = artifacts.journal
    entries, issues = journal.read_all()
    issues.extend(journal.check(entries))
    unchecked = _limitations(artifacts, journaled=bool(entries))
    journal_in_use = bool(entries) or artifacts.journal_in_use()
    by_version = {
        (entry.name, entry.version): entry
        for _, entry in reversed(entries)  # the first entry of a duplicate wins
        if entry is not None and entry.name.startswith(prefix)
    }
    base = f"{artifacts.root}/"
    keys = artifacts.store.list(base + prefix)
    foreign = artifacts.store.foreign_objects(base + prefix)
    issues.extend(_foreign_issues(base, keys, foreign))
    scan = group_versions((key for key in keys if key not in foreign), base)
    checked = 0
    for name, versions in sorted(scan.items()):
        for version, filenames in sorted(versions.items()):
            checked += 1
            entry = by_version.get((name, version))
            issues.extend(_version_issues(artifacts, name, version, filenames, entry, journal_in_use))
    issues.extend(_missing(scan, by_version))
    state_issues, state_notes = check_run_states(artifacts.store, artifacts.signer, prefix)
    issues.extend(state_issues)
    unchecked.extend(state_notes)
    return VerificationReport(checked=checked, journal_entries=len(entries), issues=issues, unchecked=unchecked)


def _foreign_issues(base: str, keys: list[str], foreign: dict[str, str]) -> list[VerificationIssue]:
    """Links, special files, directory markers and keys outside the store's layout: none is written by
    Assay, and none is followed or served."""
    issues = [
        VerificationIssue(
            name=key,
            problem="unexpected_object" if key.endswith("/") else "unsafe_object",
            detail=f"{key} is {what}: planted in the store, never followed or read",
        )
        for key, what in sorted(foreign.items())
    ]
    for key in keys:
        problem = None if key in foreign else layout_problem(key[len(base) :])
        if problem is not None:
            issues.append(
                VerificationIssue(name=key, problem="unexpected_object", detail=f"not written by Assay: {problem}")
            )
    return issues


def _limitations(artifacts: StoredVersions, *, journaled: bool) -> list[str]:
    signer = artifacts.signer
    notes = []
    if signer is None:
        notes.append("journal signatures: no signer configured, so forged journal entries go unnoticed")
    elif not signer.has_key():
        notes.append(f"journal signatures: the {signer.describe()} is absent, so forged entries go unnoticed")
    if not journaled and not artifacts.journal_in_use():
        notes.append(
            "versions are not journaled (nothing was written with a signing key): deleted versions, extra "
            "versions and content re-hashed with its manifest go unnoticed"
        )
    if signer is not None and signer.anchor is not None:
        try:
            if journaled and signer.anchor.head(artifacts.describe()) is None:
                notes.append(
                    "newest journal entries: this machine never wrote to this store, so it cannot tell "
                    "whether the newest versions were deleted with their entries"
                )
        except StorageError as error:
            notes.append(f"newest journal entries: {error}")
    elif journaled:
        notes.append("newest journal entries: no head anchor configured, so a truncated journal goes unnoticed")
    return notes


def _version_issues(
    artifacts: StoredVersions,
    name: str,
    version: int,
    filenames: set[str],
    entry: JournalEntry | None,
    journal_in_use: bool,
) -> list[VerificationIssue]:
    def issue(problem: VerificationProblem, detail: str) -> VerificationIssue:
        return VerificationIssue(
            name=name, version=version, seq=entry.seq if entry else None, problem=problem, detail=detail
        )

    if MANIFEST_FILENAME not in filenames:
        found = ", ".join(sorted(filenames))
        return [issue("missing_manifest", f"{artifacts.object_key(name, version, '')} holds only: {found}")]
    try:
        manifest, manifest_bytes = artifacts.read_manifest_bytes(name, version)
    except StorageError as error:
        return [issue("unreadable_manifest", str(error))]
    stray = "{} is neither the content nor the manifest"
    issues = [
        issue("unexpected_file", stray.format(artifacts.object_key(name, version, extra)))
        for extra in sorted(filenames - {MANIFEST_FILENAME, manifest.filename})
    ]
    key = artifacts.object_key(name, version, manifest.filename)
    try:
        problem = content_problem(manifest, read_content(artifacts.store, key, manifest))
    except ObjectNotFoundError:
        problem = ("missing_content", f"{key} is named by the manifest but not stored")
    except ObjectTooLargeError as error:
        problem = oversize_problem(manifest, error)
    except UnsafeObjectError as error:
        problem = ("unsafe_object", str(error))
    if problem:
        issues.append(issue(*problem))
    link = _chain_problem(artifacts, manifest)
    if link:
        issues.append(issue("broken_chain", link))
    digest = hashlib.sha256(manifest_bytes).hexdigest()
    if entry is not None and entry.manifest_sha256 != digest:
        issues.append(
            issue(
                "journal_mismatch",
                f"the manifest hashes to {digest}, journal entry {entry.seq} recorded {entry.manifest_sha256}: "
                "the version was rewritten after it was committed",
            )
        )
    elif entry is None and journal_in_use:
        issues.append(
            issue(
                "unjournaled_version",
                "no journal entry: added outside Assay's signed writes, or its writer died before journaling it",
            )
        )
    return issues


def _chain_problem(artifacts: StoredVersions, manifest: ArtifactManifest) -> str | None:
    previous = manifest.previous_version
    if previous is None:
        return None
    key = artifacts.object_key(manifest.name, previous, MANIFEST_FILENAME)
    try:
        digest = hashlib.sha256(artifacts.store.get(key, max_bytes=MAX_MANIFEST_BYTES)).hexdigest()
    except ObjectNotFoundError:
        return f"links to v{previous}, whose manifest {key} is gone"
    except StorageError as error:
        return f"links to v{previous}, whose manifest cannot be read: {error}"
    if digest != manifest.previous_manifest_sha256:
        return (
            f"links to v{previous} by manifest hash {manifest.previous_manifest_sha256}, but {key} hashes to {digest}"
        )
    return None


def _missing(scan: Scan, by_version: dict[tuple[str, int], JournalEntry]) -> list[VerificationIssue]:
    """Journal entries whose version, or whole artifact, is no longer stored."""
    gone: dict[str, list[JournalEntry]] = defaultdict(list)
    for (name, version), entry in sorted(by_version.items()):
        if version not in scan.get(name, {}):
            gone[name].append(entry)
    issues = []
    for name, entries in gone.items():
        if name not in scan:
            numbers = ", ".join(f"v{entry.version}" for entry in entries)
            issues.append(
                VerificationIssue(
                    name=name,
                    problem="missing_artifact",
                    detail=f"journaled as {numbers}, but no version of it is stored",
                )
            )
            continue
        issues.extend(
            VerificationIssue(
                name=name,
                version=entry.version,
                seq=entry.seq,
                problem="missing_version",
                detail=f"journal entry {entry.seq} records it, but it is not stored",
            )
            for entry in entries
        )
    return issues
