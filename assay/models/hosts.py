"""Configuration of a system under test (a model host)."""

from typing import Any, Literal

from pydantic import Field, FiniteFloat

from assay.models.base import DomainModel


class CallPolicy(DomainModel):
    """How Assay calls one system under test: concurrency, limits, time-outs, retries and the circuit breaker.

    A host file sets it under ``calls`` (any subset of the fields); what a host file leaves out comes from the
    run's policy (the defaults below unless a caller passes another)."""

    concurrency: int = Field(default=4, ge=1, description="Calls in flight at once.")
    requests_per_minute: FiniteFloat | None = Field(
        default=None, gt=0, description="Client-side rate limit on calls (none: no limit)."
    )
    tokens_per_minute: FiniteFloat | None = Field(
        default=None,
        gt=0,
        description="Client-side limit on tokens sent and received per minute (counted before and settled after each "
        "call; none: no limit).",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds one call may take.")
    retries: int = Field(default=2, ge=0, description="Retries of a call that failed in a retryable way.")
    backoff_s: float = Field(default=0.5, ge=0, description="Base of the exponential backoff (full jitter).")
    max_retry_after_s: float = Field(
        default=60.0, ge=0, description="The longest server-advised wait (Retry-After) honoured before a retry."
    )
    breaker_failures: int = Field(
        default=10, ge=0, description="Consecutive failed calls that pause the host (0: no circuit breaker)."
    )
    breaker_cooldown_s: float = Field(default=5.0, ge=0, description="How long a paused host is left alone.")
    breaker_max_pauses: int = Field(
        default=3, ge=0, description="Pauses after which the host counts as down and its other cases are not asked."
    )

    def under(self, overrides: "CallPolicy | None") -> "CallPolicy":
        """This policy with the fields ``overrides`` sets explicitly (a host file's ``calls``) taking precedence."""
        if overrides is None:
            return self
        return self.model_copy(update={name: getattr(overrides, name) for name in overrides.model_fields_set})


class ModelPrice(DomainModel):
    """What 1,000 tokens cost on one model, in the currency the host file uses."""

    input_per_1k: FiniteFloat = Field(ge=0)
    output_per_1k: FiniteFloat = Field(ge=0)
    cached_input_per_1k: FiniteFloat | None = Field(
        default=None,
        ge=0,
        description="What 1,000 input tokens read from the provider's prompt cache cost (usually a fraction of "
        "input_per_1k); None: the same as input_per_1k. Reasoning tokens are output tokens, priced as such.",
    )


TRACES_HOST_TYPE = "traces"
"""`ModelHost.type` of a production service whose answers were read from its traces (``assay traces import``):
its test lab is a sample of real requests, and two such samples are compared as independent samples."""


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
    calls: CallPolicy | None = Field(
        default=None, description="How to call this host (concurrency, rate limits, time-out, retries); unset: run's."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Price table: model name (as the server reports it, or as configured) -> price per 1,000 "
        "tokens; '*' prices any other model. Empty: no cost is computed unless the server reports one.",
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
    "blocked_address",
    "redirect_refused",
    "response_too_large",
    "other",
]
"""Why a case got no answer, for problems and for deciding what a rerun retries."""


class HostSetting(DomainModel):
    """One setting a host type takes in ``ModelHost.settings`` (or a top-level ``ModelHost`` field)."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    required: bool = False
    default: Any = None
    synonyms: list[str] = Field(
        default_factory=list,
        description="Keys of ``settings`` a host file may use instead (e.g. 'model'): moved into this field when "
        "the file is loaded, so the configuration holds one source of truth.",
    )
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
    returns_cost: bool = Field(
        default=False, description="The server reports a cost itself (any host is priced by its file's price table)."
    )
    multi_turn: bool = False
    same_protocol_as: str | None = Field(
        default=None, description="Another host type whose implementation this one reuses (same wire protocol)."
    )
