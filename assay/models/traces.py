"""What a trace import does when told nothing else: declared once, for ``assay.traces.ImportOptions`` and the
options of ``assay traces import`` (which must not import the importer to show its help)."""

TRACE_FORMAT = "otlp-json"
ROUTE_FROM_SPAN_NAME = "span-name"
"""A request's route is its root span's name (below a framework class, the first span that is none)."""
STRATIFY_BY = "route"
SAMPLE_SEED = 0
MASK_PII = True
MAX_TRACE_SPANS = 100_000
"""A trace with more spans is left out: mapping holds one trace's spans in memory at once."""
MAX_TRACE_MIB = 256
"""A trace whose spans (as kept: the attributes a case can be built from) take more is left out."""
