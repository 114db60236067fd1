"""Assay: model-risk validation studio for RAG and LLM systems."""

__version__ = "0.1.0"
