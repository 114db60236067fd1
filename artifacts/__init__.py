"""Compliance artifacts built from a run: the report, corpus patch, system-prompt extension, guardrail
configuration and the documents of each MRM step (installed as ``assay.artifacts``)."""
