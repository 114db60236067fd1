"""The append-only, signed journal of committed artifact versions.

Layout, under the artifact store's ``root``::

    _journal/entries/000000000001.json   one JournalEntry per committed version, create-only, in commit order
    _journal/index/<name>/v000001        the seq of that version's entry: a hint that spares ``get`` a scan

Each entry carries the hashes of the version's content and manifest, the MAC of the entry before it and its
own HMAC-SHA256 made with a key the store does not hold (see ``signing``). Whoever can write the store can
delete or edit versions and entries, but cannot make a journal that agrees with the edits.
"""

import re
from collections.abc import Iterator
from datetime import UTC, datetime

from pydantic import ValidationError

from assay.models.artifacts import (
    ArtifactManifest,
    JournalEntry,
    JournalHead,
    VerificationIssue,
    VerificationProblem,
)
from assay.storage.base import ObjectStore
from assay.storage.errors import ObjectExistsError, ObjectTooLargeError, StorageError
from assay.storage.signing import Signer, canonical_json

JOURNAL_DIR = "_journal"
MAX_APPEND_ATTEMPTS = 100
# An entry is under 1 KB and an index hint a few digits; bigger objects are read no further than this.
MAX_ENTRY_BYTES = 64 * 1024
MAX_HINT_BYTES = 64
_ENTRY_FILE = re.compile(r"(\d{12})\.json")
_INDEX_FILE = re.compile(r"v(\d{6,})")


def entry_payload(entry: JournalEntry) -> bytes:
    """What an entry's MAC signs: every field but the MAC itself."""
    return canonical_json(entry.model_dump(mode="json", exclude={"mac"}))


class Journal:
    """The journal of one artifact store; ``store_id`` names that store in this machine's head anchor."""

    def __init__(self, store: ObjectStore, root: str, signer: Signer | None, store_id: str) -> None:
        self.store = store
        self.entries_prefix = f"{root}/{JOURNAL_DIR}/entries/"
        self.index_prefix = f"{root}/{JOURNAL_DIR}/index/"
        self.signer = signer
        self.store_id = store_id

    def _entry_key(self, seq: int) -> str:
        return f"{self.entries_prefix}{seq:012d}.json"

    def _index_key(self, name: str, version: int) -> str:
        return f"{self.index_prefix}{name}/v{version:06d}"

    def entry_keys(self) -> list[tuple[int, str]]:
        """(seq, key) of every stored entry, in seq order."""
        found = []
        for key in self.store.list(self.entries_prefix):
            match = _ENTRY_FILE.fullmatch(key[len(self.entries_prefix) :])
            if match:
                found.append((int(match.group(1)), key))
        return sorted(found)

    def read(self, key: str) -> JournalEntry:
        try:
            return JournalEntry.model_validate_json(self.store.get(key, max_bytes=MAX_ENTRY_BYTES))
        except ObjectTooLargeError as error:
            raise StorageError(f"unreadable journal entry: {error}") from error
        except ValidationError as error:
            first = str(error).splitlines()[0]
            raise StorageError(f"unreadable journal entry {key!r} in {self.store.describe()}: {first}") from error

    def read_all(self) -> tuple[list[tuple[int, JournalEntry | None]], list[VerificationIssue]]:
        """Every entry by seq (None where unreadable) and the issues of the unreadable ones."""
        entries: list[tuple[int, JournalEntry | None]] = []
        issues = []
        for seq, key in self.entry_keys():
            try:
                entries.append((seq, self.read(key)))
            except StorageError as error:
                entries.append((seq, None))
                issues.append(_issue(seq, "unreadable_journal_entry", str(error)))
        return entries, issues

    def append(self, manifest: ArtifactManifest, manifest_sha256: str) -> JournalEntry:
        """Record a committed version as the next entry, signed and linked to the entry before it."""
        if self.signer is None:
            raise StorageError("cannot journal without a signer")
        seq, previous_mac = self._tail(trust_anchor=True)
        for _ in range(MAX_APPEND_ATTEMPTS):
            unsigned = JournalEntry(
                seq=seq + 1,
                name=manifest.name,
                version=manifest.version,
                filename=manifest.filename,
                sha256=manifest.sha256,
                manifest_sha256=manifest_sha256,
                recorded_at=datetime.now(UTC),
                previous_mac=previous_mac,
            )
            mac = self.signer.sign(entry_payload(unsigned))
            entry = unsigned.model_copy(update={"mac": mac})
            try:
                self.store.put(
                    self._entry_key(entry.seq),
                    entry.model_dump_json(indent=2).encode("utf-8"),
                    content_type="application/json",
                )
            except ObjectExistsError:  # another writer took this seq: link to the real tail instead
                seq, previous_mac = self._tail(trust_anchor=False)
                continue
            self.store.put(self._index_key(entry.name, entry.version), str(entry.seq).encode(), overwrite=True)
            if self.signer.anchor is not None:
                self.signer.anchor.advance(self.store_id, JournalHead(seq=entry.seq, mac=mac))
            return entry
        raise StorageError(f"no free journal entry in {self.store.describe()} after {MAX_APPEND_ATTEMPTS} attempts")

    def _tail(self, *, trust_anchor: bool) -> tuple[int, str | None]:
        """(seq, MAC) of the newest entry. This machine's anchor knows it without listing the journal (a
        listing costs one request per thousand entries on S3, on every commit); after a collision, or when
        the anchored entry is gone, the journal is listed."""
        anchor = self.signer.anchor if self.signer is not None else None
        head = anchor.head(self.store_id) if trust_anchor and anchor is not None else None
        if head is not None and self.store.exists(self._entry_key(head.seq)):
            return head.seq, head.mac
        keys = self.entry_keys()
        return (keys[-1][0], self._mac_at(keys[-1][1])) if keys else (0, None)

    def _mac_at(self, key: str) -> str | None:
        """The MAC to link to; an unreadable last entry links to nothing, which ``verify`` reports."""
        try:
            return self.read(key).mac
        except StorageError:
            return None

    def find(self, name: str, version: int) -> JournalEntry | None:
        """The entry of one version: through the index hint, else by scanning from the newest entry."""
        try:
            hint = self.store.get(self._index_key(name, version), max_bytes=MAX_HINT_BYTES)
            hinted = self.read(self._entry_key(int(hint)))
            if (hinted.name, hinted.version) == (name, version):
                return hinted
        except (StorageError, ValueError):
            pass  # no hint, or a stale or edited one: the scan below decides
        for _, entry in self._newest_first():
            if (entry.name, entry.version) == (name, version):
                return entry
        return None

    def indexed_versions(self, name: str) -> list[int]:
        """The versions of ``name`` the index has a hint for (one listing)."""
        prefix = f"{self.index_prefix}{name}/"
        found = (_INDEX_FILE.fullmatch(key[len(prefix) :]) for key in self.store.list(prefix))
        return sorted(int(match.group(1)) for match in found if match)

    def _newest_first(self) -> Iterator[tuple[int, JournalEntry]]:
        for seq, key in reversed(self.entry_keys()):
            try:
                yield seq, self.read(key)
            except StorageError:
                continue

    def is_empty(self) -> bool:
        return not self.entry_keys()

    def authentic(self, entry: JournalEntry) -> bool | None:
        """Whether the entry's MAC is right; None without a key to tell."""
        return self.signer.check(entry_payload(entry), entry.mac) if self.signer else None

    def check(self, entries: list[tuple[int, JournalEntry | None]]) -> list[VerificationIssue]:
        """Problems of the journal as a whole: forged entries, gaps, broken links, duplicates, truncation."""
        issues: list[VerificationIssue] = []
        seen: dict[tuple[str, int], int] = {}
        expected_seq, previous_mac = 1, None
        for seq, entry in entries:
            if seq != expected_seq:
                missing = (
                    f"entry {expected_seq} is"
                    if seq == expected_seq + 1
                    else f"entries {expected_seq} to {seq - 1} are"
                )
                issues.append(_issue(seq, "broken_journal_chain", f"journal {missing} missing"))
            elif entry is not None and seq > 1 and previous_mac is not None and entry.previous_mac != previous_mac:
                issues.append(_issue(seq, "broken_journal_chain", f"entry {seq} does not link to entry {seq - 1}"))
            expected_seq, previous_mac = seq + 1, entry.mac if entry else None
            if entry is None:
                continue
            issues.extend(self._entry_issues(seq, entry, seen))
        issues.extend(self._anchor_issues(entries))
        return issues

    def _entry_issues(self, seq: int, entry: JournalEntry, seen: dict[tuple[str, int], int]) -> list[VerificationIssue]:
        issues = []
        if entry.seq != seq:
            issues.append(_issue(seq, "forged_journal_entry", f"entry file {seq} holds entry {entry.seq}"))
        if self.authentic(entry) is False:
            issues.append(
                _issue(
                    seq,
                    "forged_journal_entry",
                    f"entry {seq} ({entry.name} v{entry.version}) is not signed by the {self.signer_name()}",
                )
            )
        first = seen.setdefault((entry.name, entry.version), seq)
        if first != seq:
            issues.append(
                _issue(seq, "duplicate_journal_entry", f"{entry.name} v{entry.version} is also entry {first}")
            )
        return issues

    def _anchor_issues(self, entries: list[tuple[int, JournalEntry | None]]) -> list[VerificationIssue]:
        try:
            head = self.anchored_head()
        except StorageError:
            return []  # an unreadable anchor is reported as a limit of the check, by verify
        if head is None:
            return []
        by_seq = dict(entries)
        last = entries[-1][0] if entries else 0
        if head.seq not in by_seq:
            detail = (
                f"this machine wrote journal entry {head.seq} to {self.store_id}, but the journal "
                + (f"ends at entry {last}" if last else "is empty")
                + ": newest versions and their entries were deleted"
            )
            return [_issue(head.seq, "truncated_journal", detail)]
        stored = by_seq[head.seq]
        if stored is not None and stored.mac != head.mac:
            return [_issue(head.seq, "forged_journal_entry", f"entry {head.seq} is not the one this machine wrote")]
        return []

    def anchored_head(self) -> JournalHead | None:
        anchor = self.signer.anchor if self.signer else None
        return anchor.head(self.store_id) if anchor else None

    def signer_name(self) -> str:
        return self.signer.describe() if self.signer else "no signer"


def _issue(seq: int, problem: VerificationProblem, detail: str) -> VerificationIssue:
    return VerificationIssue(name=JOURNAL_DIR, seq=seq, problem=problem, detail=detail)
