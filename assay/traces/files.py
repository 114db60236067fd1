"""A trace import written to disk: the lab, and its import report beside it (``<lab>.import.json``), as both
``assay traces import`` and the production re-validation flow write them."""

from collections.abc import Sequence
from pathlib import Path

from assay.formats.native import export_native
from assay.traces.importer import ImportOptions, import_traces, trace_files
from assay.traces.report import TraceImportReport


def report_path(lab: Path) -> Path:
    return lab.with_name(f"{lab.stem}.import.json")


def import_to_file(sources: Sequence[Path], options: ImportOptions, out: Path) -> TraceImportReport:
    """Import the trace files and folders ``sources`` into the lab ``out``; the report is written beside it."""
    lab, report = import_traces(trace_files(sources), options)
    out.parent.mkdir(parents=True, exist_ok=True)
    export_native(lab, out)
    report_path(out).write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report
