"""Whether the newest version a store holds of an artifact is really its newest: ``get`` without a version
must not serve a rolled-back one.

Whoever can write the store can remove the newest version (or restore an older copy of the store). What
is left is consistent with itself; only the journal and this machine's anchor still know better. ``get``
asks three of them, cheapest first:

1. the anchor: the newest journal entry this machine wrote must still be in the journal, unchanged;
2. the index hints of the artifact: none may name a version newer than the stored latest (one listing);
3. the entries written after the latest's own entry: none may be missing from the numbering (a removed
   entry may have recorded the newer version), and none may record a newer version of it. At most
   ``MAX_NEWER_ENTRIES`` of them are read, newest first, so a busy store does not cost a ``get`` one request
   per later commit; ``assay artifacts verify`` reads the whole journal and reports every missing version.
"""

from assay.models.artifacts import ArtifactManifest, JournalEntry
from assay.storage.errors import ArtifactIntegrityError, StorageError
from assay.storage.journal import Journal

MAX_NEWER_ENTRIES = 256


def rollback(journal: Journal, name: str, latest: int, entry: JournalEntry | None) -> str | None:
    """Why ``latest`` (journaled as ``entry``) cannot be the newest version of ``name``, or None."""
    head = journal.anchored_head()
    if head is not None:
        try:
            stored = journal.read(journal._entry_key(head.seq))
        except StorageError:
            stored = None
        if stored is None or stored.mac != head.mac:
            return f"journal entry {head.seq}, the newest this machine wrote to the store, is " + (
                "gone" if stored is None else "not the one it wrote"
            )
    newer = [version for version in journal.indexed_versions(name) if version > latest]
    if newer:
        return f"the journal's index records v{newer[-1]}"
    if entry is None:
        return None
    later = [(seq, key) for seq, key in journal.entry_keys() if seq > entry.seq]
    gone = _first_gap(entry.seq, [seq for seq, _ in later])
    if gone is not None:
        return f"journal entry {gone}, written after this version's, is gone (it may have recorded a newer one)"
    for seq, key in reversed(later[-MAX_NEWER_ENTRIES:]):
        try:
            found = journal.read(key)
        except StorageError:
            continue  # reported by verify; a forged entry vouches for nothing
        if found.name == name and found.version > latest and journal.authentic(found) is not False:
            return f"journal entry {seq} records v{found.version}"
    return None


def _first_gap(after: int, later: list[int]) -> int | None:
    """The first sequence number missing after ``after``: entries are numbered without gaps, so one missing
    was removed, and the version it recorded can no longer be ruled out."""
    expected = after + 1
    for seq in sorted(later):
        if seq != expected:
            return expected
        expected += 1
    return None


def refuse_rollback(journal: Journal, latest: ArtifactManifest, entry: JournalEntry | None, where: str) -> None:
    """Raise ``ArtifactIntegrityError`` when ``latest`` is not the newest version the journal knows."""
    reason = rollback(journal, latest.name, latest.version, entry)
    if reason:
        raise ArtifactIntegrityError(
            f"{latest.name!r} v{latest.version} is the newest version stored in {where}, but {reason}: the "
            f"newest version was removed or rolled back. Run 'assay artifacts verify'; ask for version "
            f"{latest.version} by number to get it anyway"
        )
