"""Manifests of versioned artifacts, the signed journal of their versions, and the reports of checking them."""

from datetime import UTC, datetime
from typing import Literal

from pydantic import AwareDatetime, Field, field_validator

from assay.models.base import DomainModel, PersistedModel

# Version 2 added the chain to the previous version; version 1 manifests still read, as unchained.
MANIFEST_SCHEMA_VERSION = 2
_SHA256 = r"^[0-9a-f]{64}$"
MAX_ARTIFACT_BYTES = 1 << 30
"""The most one artifact version may hold (a report with its evidence is a few MB). A manifest declaring more
is refused when read, so an edited size never makes ``get`` or ``verify`` read gigabytes."""


class Producer(DomainModel):
    """What wrote an artifact, so a report can be traced back to the run that made it."""

    flow: str = ""
    run_id: str = ""
    tool: str = "assay"


class ArtifactManifest(PersistedModel):
    """One immutable version of a named artifact; stored next to its content as ``manifest.json``.

    ``previous_version`` and ``previous_manifest_sha256`` chain each version to the one committed before
    it, so deleting or rewriting a version in the middle of the history breaks the next version's link.
    """

    schema_version: int = MANIFEST_SCHEMA_VERSION
    name: str = Field(min_length=1)
    version: int = Field(ge=1)
    filename: str = Field(min_length=1)
    sha256: str = Field(pattern=_SHA256)
    size: int = Field(ge=0, le=MAX_ARTIFACT_BYTES)
    content_type: str = Field(min_length=1)
    created_at: AwareDatetime
    producer: Producer = Field(default_factory=Producer)
    metadata: dict[str, str] = Field(default_factory=dict)
    previous_version: int | None = Field(default=None, ge=1)
    previous_manifest_sha256: str | None = Field(default=None, pattern=_SHA256)

    @field_validator("filename")
    @classmethod
    def _one_plain_segment(cls, value: str) -> str:
        """The content sits beside its manifest: a name with a separator, '..' or NUL would point elsewhere."""
        if value in (".", "..") or any(char in value for char in "/\\\x00"):
            raise ValueError(f"{value!r} is not a plain file name (no '/', '\\', '..' or NUL)")
        return value

    @field_validator("created_at")
    @classmethod
    def _in_utc(cls, value: datetime) -> datetime:
        """Normalise to UTC so manifests written on machines in different zones compare and sort alike."""
        return value.astimezone(UTC)


class JournalEntry(PersistedModel):
    """One committed version, recorded in the store's append-only journal and signed with a key the store
    does not hold: whoever can write the store can still not add, edit or re-hash a version unnoticed.

    ``previous_mac`` chains the entries, so removing or reordering one breaks the next one's link.
    """

    seq: int = Field(ge=1)
    name: str = Field(min_length=1)
    version: int = Field(ge=1)
    filename: str = Field(min_length=1)
    sha256: str = Field(pattern=_SHA256)
    manifest_sha256: str = Field(pattern=_SHA256)
    recorded_at: AwareDatetime
    previous_mac: str | None = Field(default=None, pattern=_SHA256)
    mac: str | None = Field(default=None, pattern=_SHA256)


class JournalHead(DomainModel):
    """The newest journal entry one machine wrote to one store, kept outside that store."""

    seq: int = Field(ge=1)
    mac: str = Field(pattern=_SHA256)


VerificationProblem = Literal[
    # a stored version disagrees with itself
    "hash_mismatch",
    "size_mismatch",
    "missing_content",
    "missing_manifest",
    "unreadable_manifest",
    "unexpected_file",
    "broken_chain",
    # the store holds what no Assay writer makes: links, special files, directory markers, stray keys
    "unsafe_object",
    "unexpected_object",
    # a run's state no longer matches its signature
    "edited_run_state",
    # a stored version disagrees with the journal
    "journal_mismatch",
    "unjournaled_version",
    "missing_version",
    "missing_artifact",
    # the journal disagrees with itself, its key or this machine's record of its head
    "unreadable_journal_entry",
    "forged_journal_entry",
    "broken_journal_chain",
    "duplicate_journal_entry",
    "truncated_journal",
    # a run bundle disagrees with its verification record (see assay.storage.bundles)
    "unreadable_bundle",
    "missing_member",
    "unexpected_member",
    "duplicate_member",
    "unreadable_member",
    "forged_bundle_record",
]


class VerificationIssue(DomainModel):
    """One problem found; ``version`` is None for problems of a whole artifact, ``seq`` names a journal entry."""

    name: str
    version: int | None = Field(default=None, ge=1)
    seq: int | None = Field(default=None, ge=1)
    problem: VerificationProblem
    detail: str


class VerificationReport(PersistedModel):
    """The outcome of checking stored artifacts: ``checked`` versions, what was wrong with them, and what
    could not be checked at all (``unchecked``), so that a clean report never claims more than it knows."""

    checked: int = Field(ge=0)
    journal_entries: int = Field(default=0, ge=0)
    issues: list[VerificationIssue] = Field(default_factory=list)
    unchecked: list[str] = Field(default_factory=list)
    signatures_checked: bool = True
    """False when no signing key was at hand: the hashes were checked, the signatures not."""

    @property
    def ok(self) -> bool:
        return not self.issues
