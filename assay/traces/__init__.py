"""Production traces as test labs: read OpenTelemetry (OpenInference) and MLflow trace exports, map each
request to a test case with its answer, sample and mask it, and report what was left out."""

from assay.traces.importer import READERS, ImportOptions, import_traces, trace_files
from assay.traces.report import TraceImportReport
from assay.traces.sampling import SampleSize

__all__ = ["READERS", "ImportOptions", "SampleSize", "TraceImportReport", "import_traces", "trace_files"]
