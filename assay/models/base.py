"""Shared configuration for every Assay domain model."""

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1


class DomainModel(BaseModel):
    """Base of every domain model: strict about unknown fields so typos in input files are caught."""

    # Infinite bounds (e.g. a perplexity range) round-trip through JSON as "Infinity" instead of null.
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, populate_by_name=True, ser_json_inf_nan="strings"
    )


class PersistedModel(DomainModel):
    """A model written to disk or object storage on its own; carries the schema version it was written with."""

    schema_version: int = SCHEMA_VERSION
