"""Manifests of versioned artifacts and the reports of checking them."""

from datetime import UTC, datetime
from typing import Literal

from pydantic import AwareDatetime, Field, field_validator

from assay.models.base import DomainModel, PersistedModel


class Producer(DomainModel):
    """What wrote an artifact, so a report can be traced back to the run that made it."""

    flow: str = ""
    run_id: str = ""
    tool: str = "assay"


class ArtifactManifest(PersistedModel):
    """One immutable version of a named artifact; stored next to its content as ``manifest.json``."""

    name: str = Field(min_length=1)
    version: int = Field(ge=1)
    filename: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)
    content_type: str = Field(min_length=1)
    created_at: AwareDatetime
    producer: Producer = Field(default_factory=Producer)
    metadata: dict[str, str] = Field(default_factory=dict)

    @field_validator("created_at")
    @classmethod
    def _in_utc(cls, value: datetime) -> datetime:
        """Normalise to UTC so manifests written on machines in different zones compare and sort alike."""
        return value.astimezone(UTC)


VerificationProblem = Literal[
    "hash_mismatch", "size_mismatch", "missing_content", "missing_manifest", "unreadable_manifest"
]


class VerificationIssue(DomainModel):
    name: str
    version: int = Field(ge=1)
    problem: VerificationProblem
    detail: str


class VerificationReport(PersistedModel):
    """The outcome of re-hashing stored artifacts: ``checked`` versions, and what was wrong with them."""

    checked: int = Field(ge=0)
    issues: list[VerificationIssue] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues
