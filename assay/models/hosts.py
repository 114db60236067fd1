"""Configuration of a system under test (a model host)."""

from typing import Any, Literal

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


HostErrorKind = Literal[
    "timeout",
    "connection",
    "rate_limited",
    "server_error",
    "client_error",
    "auth",
    "not_found",
    "malformed_response",
    "empty_answer",
    "circuit_open",
    "invalid_answer",
    "configuration",
    "other",
]
"""Why a case got no answer, for problems and for deciding what a rerun retries."""


class HostSetting(DomainModel):
    """One setting a host type takes in ``ModelHost.settings`` (or a top-level ``ModelHost`` field)."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    required: bool = False
    default: Any = None
    secret_reference: bool = Field(
        default=False, description="Holds the NAME of an environment variable with a secret, never the secret."
    )


class HostSpec(DomainModel):
    """What a host type is, declared once on its class and validated when it is registered."""

    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", description="Host type, e.g. openai-compatible.")
    display_name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    model_type: Literal["rag", "llm"]
    protocol: str = Field(min_length=1, description="What it speaks, e.g. 'OpenAI chat completions'.")
    settings: list[HostSetting] = Field(default_factory=list)
    returns_context: bool = False
    returns_tokens: bool = False
    returns_cost: bool = False
    multi_turn: bool = False
    same_protocol_as: str | None = Field(
        default=None, description="Another host type whose implementation this one reuses (same wire protocol)."
    )
