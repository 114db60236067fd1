"""A run's evidence in one zip for compliance, and its offline re-verification.

Members of ``assay artifacts bundle RUN``::

    bundle.json                                  the verification record (``BundleRecord``), signed
    run.json                                     the run's state: parameters, fingerprints, its decisions
    artifacts/<name>/v000001/<filename>          every version the run produced (decisions included)
    artifacts/<name>/v000001/manifest.json       and its manifest, byte for byte as stored
    journal/000000000042.json                    the signed journal entry of each of those versions

Each version is checked the same way when bundled and when re-verified: its content against its manifest,
the manifest against its journal entry, and the entry's MAC against the signing key. The record lists every
member's sha256 and is itself signed, so editing any member, or the record, is reported by member name.
Without the key the MACs cannot be checked; that is said, never assumed.
"""

import hashlib
import io
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from assay.formats.errors import FormatError, open_input
from assay.models.artifacts import (
    ArtifactManifest,
    JournalEntry,
    VerificationIssue,
    VerificationProblem,
    VerificationReport,
)
from assay.models.bundles import BundleMember, BundleRecord, SignatureCheck, VersionCheck
from assay.storage.artifacts import ArtifactStore
from assay.storage.errors import (
    ArtifactNotFoundError,
    ObjectNotFoundError,
    ObjectTooLargeError,
    UnsafeObjectError,
)
from assay.storage.journal import entry_payload
from assay.storage.layout import MANIFEST_FILENAME, content_problem, read_content, version_dir
from assay.storage.run_artifacts import run_versions
from assay.storage.runs import RUN_FILE, RunStates
from assay.storage.signing import Signer, canonical_json

RECORD_FILE = "bundle.json"
MAX_MEMBER_BYTES = 512 * 1024 * 1024
"""The most one member may unpack to (a report with its evidence is a few MB)."""
MAX_UNPACKED_BYTES = 1024 * 1024 * 1024
"""The most all members together may unpack to: past it, the rest are reported unreadable, not read."""


def record_payload(record: BundleRecord) -> bytes:
    """What the record's MAC signs: every field but the MAC itself."""
    return canonical_json(record.model_dump(mode="json", exclude={"mac"}))


def build_bundle(artifacts: ArtifactStore, run_id: str) -> tuple[bytes, BundleRecord]:
    """The zip of one run's evidence and its verification record; raises when the store knows no such run."""
    manifests = run_versions(artifacts, run_id)
    state = RunStates(artifacts.store).get(run_id)
    if not manifests and state is None:
        raise ArtifactNotFoundError(f"no run {run_id!r} in {artifacts.describe()}: no state and no artifact of it")
    members: dict[str, bytes] = {}
    if state is not None:
        members[RUN_FILE] = state.model_dump_json(indent=2).encode()
    checks = [_add_version(artifacts, manifest, members) for manifest in manifests]
    record = BundleRecord(
        run_id=run_id,
        created_at=datetime.now(UTC),
        store=artifacts.describe(),
        signer=artifacts.signer.describe() if artifacts.signer else "no signer",
        members=[BundleMember(path=path, sha256=_sha256(data), size=len(data)) for path, data in members.items()],
        versions=checks,
    )
    if artifacts.signer is not None:
        record = record.model_copy(update={"mac": artifacts.signer.sign(record_payload(record))})
    members[RECORD_FILE] = record.model_dump_json(indent=2).encode()
    return _zip(members, record.created_at), record


def _add_version(artifacts: ArtifactStore, manifest: ArtifactManifest, members: dict[str, bytes]) -> VersionCheck:
    folder = f"artifacts/{manifest.name}/{version_dir(manifest.version)}"
    manifest_bytes = artifacts.read_manifest_bytes(manifest.name, manifest.version)[1]
    try:
        key = artifacts.object_key(manifest.name, manifest.version, manifest.filename)
        content = read_content(artifacts.store, key, manifest)
    except (ObjectNotFoundError, ObjectTooLargeError, UnsafeObjectError):
        content = b""  # bundled empty: its check fails and says so
    members[f"{folder}/{manifest.filename}"] = content
    members[f"{folder}/{MANIFEST_FILENAME}"] = manifest_bytes
    entry = artifacts.journal.find(manifest.name, manifest.version)
    entry_path = None
    if entry is not None:
        entry_path = f"journal/{entry.seq:012d}.json"
        members[entry_path] = entry.model_dump_json(indent=2).encode()
    return check_version(members, folder, manifest.filename, entry_path, artifacts.signer)


def check_version(
    members: dict[str, bytes], folder: str, filename: str, entry_path: str | None, signer: Signer | None
) -> VersionCheck:
    """Content against manifest, manifest against journal entry, entry against the key (see module doc)."""
    manifest_bytes = members[f"{folder}/{MANIFEST_FILENAME}"]
    manifest = ArtifactManifest.model_validate_json(manifest_bytes)
    content_ok = content_problem(manifest, members.get(f"{folder}/{filename}", b"")) is None
    matches: bool | None = None
    signature: SignatureCheck = "not journaled"
    if entry_path is not None:
        entry = JournalEntry.model_validate_json(members[entry_path])
        matches = (entry.name, entry.version, entry.sha256, entry.manifest_sha256) == (
            manifest.name,
            manifest.version,
            manifest.sha256,
            _sha256(manifest_bytes),
        )
        authentic = signer.check(entry_payload(entry), entry.mac) if signer is not None else None
        signature = "no key" if authentic is None else "valid" if authentic else "invalid"
    return VersionCheck(
        name=manifest.name,
        version=manifest.version,
        kind=manifest.metadata.get("kind", "artifact"),
        content=f"{folder}/{filename}",
        manifest=f"{folder}/{MANIFEST_FILENAME}",
        journal_entry=entry_path,
        content_matches_manifest=content_ok,
        manifest_matches_journal=matches,
        signature=signature,
    )


def verify_bundle(source: Path | bytes, signer: Signer | None) -> VerificationReport:
    """Re-check a bundle with nothing but its bytes and the signing key; problems name the member at fault.

    ``source`` is the zip's path (only a regular file is opened: a FIFO or a device is refused, never waited on
    or read forever) or its bytes. Members are read one at a time, each bounded by ``MAX_MEMBER_BYTES`` and all
    together by ``MAX_UNPACKED_BYTES``, so a zip bomb ends in a named problem, not a MemoryError."""
    try:
        with _opened(source) as stream, zipfile.ZipFile(stream) as archive:
            members, issues = _read_members(archive)
        record = BundleRecord.model_validate_json(members[RECORD_FILE])
    except FormatError:
        raise  # not a file to read at all (missing, a FIFO, a device, too large): the command says so, exit 2
    except (zipfile.BadZipFile, KeyError, ValidationError, ValueError) as error:
        detail = f"not a run bundle with a readable {RECORD_FILE}: {str(error).splitlines()[0]}"
        return VerificationReport(checked=0, issues=[_issue(RECORD_FILE, "unreadable_bundle", detail)])
    unchecked = []
    authentic = signer.check(record_payload(record), record.mac) if signer is not None else None
    if signer is None or authentic is None:
        unchecked.append("signatures: no signing key here, so a bundle rewritten with matching hashes goes unnoticed")
    elif not authentic:
        issues.append(_issue(RECORD_FILE, "forged_bundle_record", f"not signed by the {signer.describe()}"))
    listed = {member.path: member for member in record.members}
    unreadable = {issue.name for issue in issues}
    for path, member in listed.items():
        if path in unreadable:
            continue
        if path not in members:
            issues.append(_issue(path, "missing_member", "listed in the record but not in the bundle"))
        elif (digest := _sha256(members[path])) != member.sha256:
            detail = f"the record says sha256 {member.sha256}, it hashes to {digest}"
            issues.append(_issue(path, "hash_mismatch", detail))
    for path in sorted(set(members) - set(listed) - {RECORD_FILE}):
        issues.append(_issue(path, "unexpected_member", "in the bundle but not in its record"))
    for check in record.versions:
        issues.extend(_version_issues(members, check, signer))
    entries = sum(check.journal_entry is not None for check in record.versions)
    return VerificationReport(checked=len(listed), journal_entries=entries, issues=issues, unchecked=unchecked,
                              signatures_checked=authentic is not None)  # fmt: skip


@contextmanager
def _opened(source: Path | bytes) -> Iterator[BinaryIO]:
    if isinstance(source, bytes):
        yield io.BytesIO(source)
        return
    with open_input(source) as stream:  # a regular file of at most MAX_INPUT_BYTES, else a FormatError
        yield stream


def _read_members(archive: zipfile.ZipFile) -> tuple[dict[str, bytes], list[VerificationIssue]]:
    """Every member's bytes, and a problem for each member that cannot be trusted or read: a name used twice
    (a zip tool may extract either copy, so a tampered one placed first would pass a check of the last),
    encryption, a compression method bundles never use, a size past the limits, corrupt data."""
    members: dict[str, bytes] = {}
    issues: list[VerificationIssue] = []
    counts = Counter(info.filename for info in archive.infolist())
    for name in sorted(name for name, count in counts.items() if count > 1):
        detail = f"{counts[name]} members have this name: a zip tool may extract any of them, so none is trusted"
        issues.append(_issue(name, "duplicate_member", detail))
    unpacked = 0
    for info in archive.infolist():
        if counts[info.filename] > 1 or info.is_dir():
            continue
        problem = _unreadable(info, unpacked)
        if problem is None:
            try:
                members[info.filename] = _read_bounded(archive, info)
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as error:
                problem = f"cannot be read ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
        if problem is not None:
            issues.append(_issue(info.filename, "unreadable_member", problem))
            continue
        unpacked += len(members[info.filename])
    return members, issues


def _unreadable(info: zipfile.ZipInfo, unpacked: int) -> str | None:
    if info.flag_bits & 0x1:
        return "encrypted: a bundle is never encrypted, and its content cannot be checked"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return f"compression method {info.compress_type}: bundles are stored or deflated"
    if info.file_size > MAX_MEMBER_BYTES:
        return f"declares {info.file_size} bytes unpacked, more than the {MAX_MEMBER_BYTES} a member may hold"
    if unpacked + info.file_size > MAX_UNPACKED_BYTES:
        return f"the members unpack to more than the {MAX_UNPACKED_BYTES} bytes a bundle may hold"
    return None


def _read_bounded(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The member's bytes; zipfile stops at the declared size and checks the CRC at the end."""
    with archive.open(info) as member:
        return member.read(MAX_MEMBER_BYTES + 1)


def _version_issues(members: dict[str, bytes], check: VersionCheck, signer: Signer | None) -> list[VerificationIssue]:
    wanted = [check.content, check.manifest, *([check.journal_entry] if check.journal_entry else [])]
    if any(path not in members for path in wanted):
        return []  # reported as a missing member
    folder, _, filename = check.content.rpartition("/")
    try:
        now = check_version(members, folder, filename, check.journal_entry, signer)
    except ValidationError as error:
        return [_issue(check.manifest, "unreadable_manifest", str(error).splitlines()[0])]
    issues = []
    if not now.content_matches_manifest:
        issues.append(_issue(check.content, "hash_mismatch", f"does not match its manifest {check.manifest}"))
    if now.manifest_matches_journal is False:
        detail = f"{check.manifest} does not match its journal entry {check.journal_entry}"
        issues.append(_issue(check.manifest, "journal_mismatch", detail))
    if now.signature == "invalid":
        issues.append(_issue(str(check.journal_entry), "forged_journal_entry", "its MAC does not check with the key"))
    elif now.signature == "not journaled":
        issues.append(_issue(check.content, "unjournaled_version", "no signed journal entry vouches for it"))
    return issues


def _issue(path: str, problem: VerificationProblem, detail: str) -> VerificationIssue:
    return VerificationIssue(name=path, problem=problem, detail=detail)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _zip(members: dict[str, bytes], created_at: datetime) -> bytes:
    buffer = io.BytesIO()
    stamp = created_at.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(members):
            archive.writestr(zipfile.ZipInfo(path, date_time=stamp), members[path], zipfile.ZIP_DEFLATED)
    return buffer.getvalue()
