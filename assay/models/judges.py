"""LLM judges: where the judge is, how a run uses it, and what every judged case keeps as evidence.

The endpoint holds no secret: ``api_key_env`` names the environment variable with the key, read at call
time, so an endpoint can be written into Prefect parameters, results and reports as is.
"""

from typing import Any, Literal

from pydantic import Field, FiniteFloat

from assay.models.base import DomainModel
from assay.models.hosts import CallPolicy, HostErrorKind, ModelPrice

StructuredOutput = Literal["auto", "json_schema", "tool", "json_object", "prompt"]
"""How the judge is asked for JSON: ``auto`` tries a JSON schema and falls back to the schema in the prompt
when the server refuses ``response_format``; ``tool`` forces a function call; ``json_object`` is JSON mode;
``prompt`` only describes the schema in the prompt."""

JudgeFailureKind = Literal[HostErrorKind, "unparseable", "refusal", "no_logprobs", "budget_exhausted"]
"""Why a judge call gave no verdict: the call failures shared with hosts, plus the judge's own."""


class JudgeEndpoint(DomainModel):
    """An OpenAI-compatible chat endpoint used as the judge (OpenAI, Azure OpenAI, vLLM, llama.cpp server,
    Ollama's ``/v1``...). Empty ``base_url`` and ``model``: no judge is configured."""

    base_url: str = Field(default="", description="Base URL, e.g. http://127.0.0.1:8000/v1 (Azure: the resource).")
    model: str = Field(default="", description="Model name (Azure: the deployment).")
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key; none: no key is sent."
    )
    azure_api_version: str | None = Field(
        default=None, description="Set for Azure OpenAI: the api-version query parameter, e.g. 2024-10-21."
    )
    temperature: FiniteFloat = Field(default=0.0, ge=0, le=2)
    seed: int | None = Field(default=0, description="Sent with every call so the judge repeats itself where it can.")
    max_tokens: int | None = Field(default=1024, ge=1)
    structured_output: StructuredOutput = "auto"
    calls: CallPolicy | None = Field(default=None, description="Concurrency, rate limits, time-out and retries.")
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description="Price per model name ('*' for any), for the run's cost account."
    )
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Passed to chat.completions.create as is (top_p, extra_body...)."
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url.strip() and self.model.strip())

    @property
    def label(self) -> str:
        """Who judged, for evidence and reports: the model at its endpoint."""
        return f"{self.model} at {self.base_url}" if self.configured else "no judge"


class JudgeRunOptions(DomainModel):
    """How a run spends its judge: repeats per case, the offline-first cascade and a call budget."""

    repeats: int = Field(default=1, ge=1, le=10, description="Times each case is judged; flips are flagged flaky.")
    cascade: bool = Field(
        default=False,
        description="Judge only cases whose offline proxy score lies in the uncertain band around its threshold.",
    )
    band: FiniteFloat = Field(
        default=0.15, gt=0, le=1, description="Half-width of the uncertain band, in the proxy's metric units."
    )
    budget: int | None = Field(
        default=None, ge=0, description="Most cases one evaluator may send to the judge (most uncertain first)."
    )


class JudgeCall(DomainModel):
    """Evidence of one judge call for one case: what was asked, what came back, what Assay read from it."""

    template: str
    template_version: str
    step: str = Field(default="", description="Which step of a multi-step judge this was, e.g. 'claims'.")
    model: str
    messages: list[dict[str, str]] = Field(description="The exact prompt sent (each message bounded in size).")
    raw_reply: str | None = Field(default=None, description="The reply text as received (bounded in size).")
    verdict: dict[str, Any] | None = Field(default=None, description="The parsed reply, valid for the template.")
    error: str | None = None
    error_kind: JudgeFailureKind | None = None
    cached: bool = False
    repaired: bool = Field(default=False, description="True when the reply parsed only after one repair request.")
    structured_output: str = ""
    repeat: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency_s: float | None = None
    attempts: int = 0


class JudgeAccount(DomainModel):
    """What one evaluator's judging cost in a run: calls made (cache hits cost nothing), tokens, money, time."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    repairs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = Field(default=None, description="None when no price is known for the judge model.")
    wall_s: float = 0.0
    saved_by_cascade: int = Field(default=0, description="Cases the cascade decided offline (judge calls saved).")

    def add(self, call: JudgeCall) -> None:
        if call.cached:
            self.cache_hits += 1
        else:
            self.calls += max(call.attempts, 1) if call.error_kind != "budget_exhausted" else 0
        if call.error is not None:
            self.failures += 1
        self.repairs += int(call.repaired and not call.cached)
        if not call.cached:
            self.input_tokens += call.input_tokens or 0
            self.output_tokens += call.output_tokens or 0
            if call.cost is not None:
                self.cost = round((self.cost or 0.0) + call.cost, 8)

    def merged(self, other: "JudgeAccount") -> "JudgeAccount":
        totals = {
            name: getattr(self, name) + getattr(other, name)
            for name in ("calls", "cache_hits", "failures", "repairs", "input_tokens", "output_tokens", "wall_s",
                         "saved_by_cascade")
        }  # fmt: skip
        costs = [cost for cost in (self.cost, other.cost) if cost is not None]
        return JudgeAccount(**totals, cost=round(sum(costs), 8) if costs else None)


class JudgeSummary(DomainModel):
    """The judge section of a ``results.json``: who judged, with which prompt templates, at what cost."""

    endpoint: JudgeEndpoint
    options: JudgeRunOptions
    templates: dict[str, str] = Field(default_factory=dict, description="Template id -> version used.")
    account: JudgeAccount = Field(default_factory=JudgeAccount)
    cascade: dict[str, Any] | None = Field(default=None, description="Routing counts when the cascade ran.")
    flaky_cases: int = 0
