"""The verification record of a run bundle (``bundle.json`` inside the zip): what each member hashes to and
how each artifact version checked against its manifest and its signed journal entry when it was bundled."""

from typing import Literal

from pydantic import AwareDatetime, Field

from assay.models.base import DomainModel, PersistedModel

BUNDLE_SCHEMA_VERSION = 1
_SHA256 = r"^[0-9a-f]{64}$"

# valid: the entry's MAC checks with the signing key; invalid: it does not; no key: nothing to check it with;
# not journaled: the version has no journal entry at all
SignatureCheck = Literal["valid", "invalid", "no key", "not journaled"]


class BundleMember(DomainModel):
    path: str
    sha256: str = Field(pattern=_SHA256)
    size: int = Field(ge=0)


class VersionCheck(DomainModel):
    """One artifact version in the bundle and what checking it found."""

    name: str
    version: int = Field(ge=1)
    kind: str = Field(default="artifact", description="'decision' for a reviewer decision, else 'artifact'.")
    content: str = Field(description="The member holding the content.")
    manifest: str = Field(description="The member holding the manifest.")
    journal_entry: str | None = Field(default=None, description="The member holding its journal entry.")
    content_matches_manifest: bool
    manifest_matches_journal: bool | None = None
    signature: SignatureCheck

    @property
    def ok(self) -> bool:
        return (
            self.content_matches_manifest
            and self.manifest_matches_journal is not False
            and self.signature in ("valid", "no key")
        )


class BundleRecord(PersistedModel):
    """Signed (``mac``) with the store's signing key, so the member hashes cannot be rewritten unnoticed."""

    schema_version: int = BUNDLE_SCHEMA_VERSION
    run_id: str
    created_at: AwareDatetime
    store: str = Field(description="The artifact store the bundle was made from.")
    signer: str = Field(description="Where the signing key was looked for; never the key.")
    members: list[BundleMember]
    versions: list[VersionCheck]
    mac: str | None = Field(default=None, pattern=_SHA256)
