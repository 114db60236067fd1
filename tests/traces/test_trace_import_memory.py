"""`assay traces import` streams: spans wait in the spill, one trace's spans are in memory at a time, and a trace
over the size limits is left out unread, with the limit as its reason."""

import gc
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.traces import ImportOptions, import_traces
from assay.traces import spill as spill_module
from assay.traces.spans import Span
from assay.traces.spill import SpanSpill
from tests.traces.test_trace_files import (
    T0,
    export,
    otlp_span,
    rag_trace,
    rows_by_key,
    run_import,
    span_id,
    trace_id,
    write_jsonl,
)

TOO_MANY = "more than 5 spans (--max-trace-spans)"


def long_trace(trace: int, spans: int) -> list[dict]:
    """A request whose root has ``spans - 1`` CHAIN children."""
    base = trace * 1000
    root = otlp_span(trace, base, None, "batch", "CHAIN", T0, T0 + 9, input__value="Summarise the batch.")
    steps = [otlp_span(trace, base + n, base, f"step {n}", "CHAIN", T0 + n / 100, T0 + 1) for n in range(1, spans)]
    return [root, *steps]


def live_spans() -> int:
    """Spans alive now (spans hold no cycles: one no longer referenced is freed at once). ``type``, not
    ``isinstance``, which would ask every object for its ``__class__``, and some answer with a warning."""
    return sum(1 for item in gc.get_objects() if type(item) is Span)


def spied(monkeypatch: pytest.MonkeyPatch, check: Callable[[str], None]) -> list[str]:
    """The trace ids whose spans the import loads, in order; ``check`` runs before each load."""
    loaded: list[str] = []
    original = SpanSpill.spans_of

    def spans_of(self: SpanSpill, trace: str) -> list[Span]:
        check(trace)
        loaded.append(trace)
        return original(self, trace)

    monkeypatch.setattr(SpanSpill, "spans_of", spans_of)
    return loaded


def test_a_trace_over_the_span_limit_is_left_out_unread_and_the_others_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = write_jsonl(tmp_path / "t.jsonl", [export(rag_trace(1, T0) + long_trace(2, 6) + rag_trace(3, T0 + 1))])
    loaded = spied(monkeypatch, lambda _: None)
    lab, report, output = run_import(tmp_path, [file], "--max-trace-spans", "5")
    assert list(rows_by_key(lab)) == [trace_id(1), trace_id(3)]
    assert report["left_out"] == [{"reason": TOO_MANY, "count": 1, "examples": [trace_id(2)]}]
    assert report["traces"] == 3 and report["spans"] == 16 and report["spans_by_kind"]["CHAIN"] == 8
    assert trace_id(2) not in loaded
    assert f"left out 1: {TOO_MANY}" in " ".join(output.split())


def test_a_trace_over_the_byte_limit_is_left_out_with_the_option_named(tmp_path: Path) -> None:
    spans = rag_trace(1, T0, question="x" * 2**20) + rag_trace(2, T0 + 1)
    file = write_jsonl(tmp_path / "t.jsonl", [export(spans)])
    lab, report = import_traces([file], ImportOptions(max_trace_bytes=2**20))
    assert [row.test_case.key for row in lab.rows] == [trace_id(2)]
    [left] = report.left_out
    assert (left.reason, left.examples) == ("more than 1 MiB of spans (--max-trace-mb)", [trace_id(1)])


@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_limit_below_one_is_refused_without_a_traceback(tmp_path: Path, value: str) -> None:
    from typer.testing import CliRunner

    from assay.apps.cli.main import app

    file = write_jsonl(tmp_path / "t.jsonl", [export(rag_trace(1, T0))])
    for option in ("--max-trace-spans", "--max-trace-mb"):
        result = CliRunner().invoke(app, ["traces", "import", str(file), "--out", str(tmp_path / "lab.json"),
                                          option, value])  # fmt: skip
        assert result.exit_code == 2 and option in result.output and "Traceback" not in result.output
        assert "greater than or equal to 1" in result.output


def test_duplicates_are_found_across_batches_in_the_order_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill_module, "BATCH_SPANS", 3)
    document = export(rag_trace(130, T0))
    file = write_jsonl(tmp_path / "t.jsonl", [document, export(rag_trace(131, T0 + 1)), document])
    lab, report, _ = run_import(tmp_path, [file])
    assert len(lab["rows"]) == 2 and report["spans"] == 15 and report["spans_by_kind"]["CHAIN"] == 2
    [duplicates] = report["left_out"]
    assert duplicates["count"] == 5
    assert duplicates["examples"] == [f"{trace_id(130)}/{span_id(1300 + n)}" for n in range(5)]


def test_traces_split_across_files_in_any_order_import_as_from_one_file(tmp_path: Path) -> None:
    spans = [span for number in range(20) for span in rag_trace(number + 1, T0 + number, session__id=f"s{number % 3}")]
    one = write_jsonl(tmp_path / "one.jsonl", [export(spans)])
    random.Random(7).shuffle(spans)
    parts = [write_jsonl(tmp_path / f"part{n}.jsonl", [export(spans[n::3])]) for n in range(3)]
    whole, whole_report = import_traces([one], ImportOptions())
    split, split_report = import_traces(parts, ImportOptions())
    assert split.rows == whole.rows and split_report.sessions == whole_report.sessions == 3
    assert len(split.rows) == 20 and split.rows[-1].test_case.turns  # a later request carries its session


def test_at_most_one_traces_spans_are_in_memory_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill_module, "BATCH_SPANS", 7)
    spans = [span for number in range(12) for span in rag_trace(number + 1, T0 + number)]
    file = write_jsonl(tmp_path / "t.jsonl", [export(spans[n : n + 10]) for n in range(0, len(spans), 10)])
    added: list[int] = []
    original_add = SpanSpill.add

    def add(self: SpanSpill, span: Span) -> None:
        added.append(live_spans())
        original_add(self, span)

    def nothing_loaded(_: str) -> None:
        assert live_spans() == 0, "the previous trace's spans are still held"

    monkeypatch.setattr(SpanSpill, "add", add)
    loaded = spied(monkeypatch, nothing_loaded)
    lab, report = import_traces([file], ImportOptions())
    assert max(added) == 1  # the span being read: the ones before it are on disk
    assert loaded == [trace_id(number + 1) for number in range(12)] and len(lab.rows) == 12
    assert json.loads(report.model_dump_json())["spans"] == 60
