"""The spans of a trace import, spilled to a temporary SQLite database: an import holds one trace's spans in
memory at a time, never the export's.

A trace is complete only once every file is read (an exporter writes a trace's spans in any order and across
files), so each span waits until then: here, on disk, pickled, in batches written one transaction each. The
database counts each trace's spans and their bytes as they arrive, so a trace too large to map is known
without loading it, and gives the spans back one trace at a time, each trace's in the order read. The mapped
traces wait in it too, until the sample is drawn from their summaries.

GenAI log records (the event form of a span's messages) wait beside the spans, and join them when their trace
is read back. The database lives in a private temporary folder (mode 0700, under ``TMPDIR``) removed when the
import ends. It holds the spans unmasked, as the downloaded S3 exports beside it do: masking happens when the
lab is built.
"""

import pickle
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path

from assay.traces.mapping import MappedTrace
from assay.traces.spans import LogEvent, Span, SpanEvent

BATCH_SPANS = 10_000
"""Spans written per transaction: large enough that SQLite's per-transaction cost vanishes, small enough that
the pending batch (pickled) stays a few megabytes."""
BATCH_MAPPED = 1_000
_SPAN_FIELDS = tuple(field.name for field in fields(Span))

_SETUP = """
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA locking_mode = EXCLUSIVE;
PRAGMA cache_size = -16384;
CREATE TABLE spans (seq INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, body BLOB NOT NULL,
                    UNIQUE (trace_id, span_id));
CREATE TABLE traces (trace_id TEXT PRIMARY KEY, first INTEGER NOT NULL, spans INTEGER NOT NULL,
                     size INTEGER NOT NULL);
CREATE TABLE mapped (trace_id TEXT PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE events (seq INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, body BLOB NOT NULL);
CREATE INDEX events_of_trace ON events (trace_id);
"""
_COUNT = """INSERT INTO traces VALUES (?, ?, ?, ?)
ON CONFLICT (trace_id) DO UPDATE SET spans = spans + excluded.spans, size = size + excluded.size"""

DuplicateHandler = Callable[[str, str], None]
"""Told ``(trace_id, span_id)`` of each span whose ids were read before: the later copy is not kept."""
_Pending = tuple[int, str, str, str, bytes]
"""(read order, trace id, span id, kind, pickled span)"""


@dataclass(frozen=True)
class SpilledTrace:
    trace_id: str
    spans: int
    size: int
    """Bytes of its spans as stored (pickled, with the attributes a case can be built from)."""


class SpanSpill:
    """Spans in (`add`), then traces out (`traces`, `spans_of`); mapped traces kept (`keep`) and read back
    (`mapped`). Made by `span_spill`."""

    def __init__(self, connection: sqlite3.Connection, on_duplicate: DuplicateHandler) -> None:
        self._db = connection
        self._on_duplicate = on_duplicate
        self._pending: list[_Pending] = []
        self._pending_mapped: list[tuple[str, bytes]] = []
        self._read = 0
        self.log_events = 0
        """GenAI log records read (joined to their spans when the trace is read back)."""
        self.kinds: Counter[str] = Counter()
        """Spans kept (duplicates not counted) by OpenInference kind, ``unknown`` when a span declares none."""

    def add(self, span: Span) -> None:
        self._read += 1
        body = _encoded(span)
        self._pending.append((self._read, span.trace_id, span.span_id, span.kind or "unknown", body))
        if len(self._pending) >= BATCH_SPANS:
            self.flush()

    def add_event(self, event: LogEvent) -> None:
        self.log_events += 1
        body = pickle.dumps((event.event.name, event.event.fields), pickle.HIGHEST_PROTOCOL)
        self._db.execute("INSERT INTO events (trace_id, span_id, body) VALUES (?, ?, ?)",
                         (event.trace_id, event.span_id, body))  # fmt: skip

    def flush(self) -> None:
        """Write the pending spans in one transaction; a span whose ids are stored already (read before, in
        this batch or an earlier one) is a duplicate."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        with self._db:
            cursor = self._db.executemany(
                "INSERT OR IGNORE INTO spans VALUES (?, ?, ?, ?)", [row[:3] + row[4:] for row in batch]
            )
            kept = batch if cursor.rowcount == len(batch) else self._first_copies(batch)
            self._count(kept)

    def trace_count(self) -> int:
        self.flush()
        return self._db.execute("SELECT count(*) FROM traces").fetchone()[0]

    def traces(self) -> Iterator[SpilledTrace]:
        """Every trace, in the order its first span was read."""
        self.flush()
        for trace_id, spans, size in self._db.execute("SELECT trace_id, spans, size FROM traces ORDER BY first"):
            yield SpilledTrace(trace_id, spans, size)

    def spans_of(self, trace_id: str) -> list[Span]:
        """The spans of one trace, in the order they were read, each with its GenAI log records after its own
        events (in the order read)."""
        rows = self._db.execute("SELECT body FROM spans WHERE trace_id = ? ORDER BY seq", (trace_id,))
        spans = [_decoded(body) for (body,) in rows]
        by_id = {span.span_id: span for span in spans}
        events = self._db.execute("SELECT span_id, body FROM events WHERE trace_id = ? ORDER BY seq", (trace_id,))
        for span_id, body in events:
            if span_id in by_id:
                by_id[span_id].events.append(SpanEvent(*pickle.loads(body)))
        return spans

    def keep(self, trace: MappedTrace) -> None:
        self._pending_mapped.append((trace.trace_id, pickle.dumps(trace, pickle.HIGHEST_PROTOCOL)))
        if len(self._pending_mapped) >= BATCH_MAPPED:
            self._flush_mapped()

    def mapped(self, trace_ids: Sequence[str]) -> Iterator[MappedTrace]:
        """The kept traces ``trace_ids``, in that order, one at a time."""
        self._flush_mapped()
        for trace_id in trace_ids:
            (body,) = self._db.execute("SELECT body FROM mapped WHERE trace_id = ?", (trace_id,)).fetchone()
            yield pickle.loads(body)

    def _flush_mapped(self) -> None:
        batch, self._pending_mapped = self._pending_mapped, []
        with self._db:
            self._db.executemany("INSERT INTO mapped VALUES (?, ?)", batch)

    def _first_copies(self, batch: list[_Pending]) -> list[_Pending]:
        """The rows of ``batch`` that were stored: a row whose ids are stored under another read order was read
        before, and is reported as a duplicate."""
        kept = []
        for row in batch:
            seq, trace_id, span_id = row[:3]
            (stored,) = self._db.execute(
                "SELECT seq FROM spans WHERE trace_id = ? AND span_id = ?", (trace_id, span_id)
            ).fetchone()
            if stored == seq:
                kept.append(row)
            else:
                self._on_duplicate(trace_id, span_id)
        return kept

    def _count(self, kept: list[_Pending]) -> None:
        """Add the kept spans to their traces' counts (a trace's first read order is set once)."""
        per_trace: dict[str, list[int]] = {}
        for seq, trace_id, _, kind, body in kept:
            self.kinds[kind] += 1
            counts = per_trace.setdefault(trace_id, [seq, 0, 0])
            counts[1] += 1
            counts[2] += len(body)
        self._db.executemany(_COUNT, [(trace_id, *counts) for trace_id, counts in per_trace.items()])


def _encoded(span: Span) -> bytes:
    """A span pickled as the tuple of its fields: a dataclass pickles its field names with every instance, and
    through Python code; a tuple takes 40% less room and a third of the time."""
    return pickle.dumps(tuple(getattr(span, name) for name in _SPAN_FIELDS), pickle.HIGHEST_PROTOCOL)


def _decoded(body: bytes) -> Span:
    return Span(*pickle.loads(body))


@contextmanager
def span_spill(on_duplicate: DuplicateHandler) -> Iterator[SpanSpill]:
    """A spill in a fresh temporary folder, removed on leaving. The database is written without a journal or
    syncing: it lives only as long as this import, so a crash loses nothing that a rerun would not rebuild."""
    with tempfile.TemporaryDirectory(prefix="assay-spans-") as folder:
        connection = sqlite3.connect(Path(folder) / "spans.sqlite")
        try:
            connection.executescript(_SETUP)
            yield SpanSpill(connection, on_duplicate)
        except sqlite3.OperationalError as error:  # the temporary disk full, say
            raise OSError(f"the spans' temporary copy in {folder}: {error}; set TMPDIR to a folder with room "
                          "for about as much as the trace files hold") from error  # fmt: skip
        finally:
            connection.close()
