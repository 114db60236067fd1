"""Assay's domain models: pydantic, no I/O. Every model written on its own carries ``schema_version``."""

from assay.models.assertions import Assertion
from assay.models.base import SCHEMA_VERSION, DomainModel, PersistedModel
from assay.models.corpus import Chunk, Corpus, Document
from assay.models.hosts import CallPolicy, HostErrorKind, HostSetting, HostSpec, ModelHost, ModelPrice
from assay.models.lab import RetrievedChunk, TestLab, TestLabRow, ToolCall
from assay.models.suite import ConversationTurn, Relationship, Test, TestCase, TestSuite

__all__ = [
    "SCHEMA_VERSION",
    "Assertion",
    "CallPolicy",
    "Chunk",
    "ConversationTurn",
    "Corpus",
    "Document",
    "DomainModel",
    "HostErrorKind",
    "HostSetting",
    "HostSpec",
    "ModelHost",
    "ModelPrice",
    "PersistedModel",
    "Relationship",
    "RetrievedChunk",
    "Test",
    "TestCase",
    "TestLab",
    "TestLabRow",
    "TestSuite",
    "ToolCall",
]
