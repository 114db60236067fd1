"""Configuration of a system under test (a model host)."""

from typing import Any

from pydantic import Field

from assay.models.base import DomainModel


class ModelHost(DomainModel):
    """How to reach one system under test.

    Secrets are never stored here: ``secret_ref`` names an environment variable that holds the credential,
    so a host configuration can be written into artifacts and reports safely.
    """

    key: str = Field(min_length=1, description="Identifier used as model_key in test labs and results.")
    type: str = Field(min_length=1, description="Registered host type, e.g. sample-rag.")
    name: str = ""
    url: str = ""
    secret_ref: str | None = Field(default=None, description="Name of the env var holding the credential.")
    llm_model_name: str = ""
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Advanced host settings, passed through to the host as is."
    )
