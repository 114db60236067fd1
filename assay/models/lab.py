"""Test labs: test cases resolved against one or more systems under test."""

from typing import Literal

from pydantic import Field, FiniteFloat, field_validator, model_validator

from assay.models.base import DomainModel, PersistedModel
from assay.models.hosts import HostErrorKind, ModelHost
from assay.models.suite import TestCase


class RetrievedChunk(DomainModel):
    text: str
    doc_uri: str = ""
    rank: int = Field(default=0, ge=0, description="0 is the chunk the retriever ranked first.")
    score: FiniteFloat | None = None


class ToolCall(DomainModel):
    """A tool the system called (or asked to call) while answering, in the order it was called.

    Hosts fill ``name`` and ``arguments``; imported traces also record what the tool returned, whether it
    failed, how long it took and which span it came from, so that an agent's run can be checked step by step.
    """

    name: str
    arguments: dict = Field(default_factory=dict)
    arguments_text: str | None = Field(
        default=None, description="The arguments as recorded when they were not a JSON object (kept, not parsed)."
    )
    output: str | None = Field(default=None, description="What the tool returned, when the trace recorded it.")
    error: str | None = Field(default=None, description="Why the tool call failed; None when it did not (or unknown).")
    duration: FiniteFloat | None = Field(default=None, ge=0, description="Seconds the tool call took.")
    span_id: str | None = Field(default=None, description="The trace span the call was read from.")
    final_reply: bool = Field(
        default=False,
        exclude_if=lambda value: not value,
        description="The request ended on this call: the model's last reply asked for it instead of answering "
        "(the row's answer is then absent, with ``answer_absent`` saying why).",
    )
    agent: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The sub-agent that made the call (an agent span below the request's root), so that a "
        "sub-agent's calls stay with it; None: the request's own.",
    )


class TestLabRow(DomainModel):
    """One test case answered by one model."""

    __test__ = False

    test_case: TestCase
    test_key: str = ""
    model_key: str
    actual_output: str | None = None
    context: list[RetrievedChunk] = Field(default_factory=list)
    actual_duration: FiniteFloat | None = Field(default=None, ge=0)
    cost: FiniteFloat | None = Field(default=None, ge=0)
    cost_source: Literal["reported", "price_table"] | None = Field(
        default=None, description="Who gave the cost: the server (or precomputed answers), or the host file's prices."
    )
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    token_count_source: str | None = Field(
        default=None,
        description="None: the tokens are the server's (or the file's) own figures; else the "
        "tokenizer that counted them, e.g. 'tiktoken cl100k_base'.",
    )
    tool_calls: list[ToolCall] = Field(default_factory=list)
    error: str | None = Field(default=None, description="Why the host gave no answer; None when it did.")
    answer_absent: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Why a request that did not fail has no answer (its last model reply was a tool call, say); "
        "answer-level evaluators leave the case unscored with this reason, agent-level ones still score it.",
    )
    cached_input_tokens: int | None = Field(
        default=None, ge=0, exclude_if=lambda value: value is None,
        description="Of ``input_tokens``, those read from the provider's prompt cache (usually priced lower).",
    )  # fmt: skip
    reasoning_tokens: int | None = Field(
        default=None, ge=0, exclude_if=lambda value: value is None,
        description="Of ``output_tokens``, those the model spent reasoning (not in the answer).",
    )  # fmt: skip
    session_id: str | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The conversation (trace ``session.id``) an imported request belonged to.",
    )  # fmt: skip
    user_id: str | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The end user (trace ``user.id``) who sent an imported request.",
    )  # fmt: skip
    error_kind: HostErrorKind | None = Field(default=None, description="The kind of ``error``, when known.")
    model_name: str | None = Field(default=None, description="The model name the server reported, if any.")
    raw_response: str | None = Field(
        default=None, description="The server's reply as received (bounded in size), kept as evidence."
    )
    attempts: int = Field(default=1, ge=0)
    masked: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="What the trace import masked in this row: field -> kind -> values replaced by a placeholder "
        "('answer': {'phone': 1}). The leakage evaluators read each placeholder as the leak it replaced.",
    )

    @field_validator(
        "actual_duration",
        "cost",
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "reasoning_tokens",
        "attempts",
        mode="before",
    )
    @classmethod
    def _a_number_not_a_boolean(cls, value: object) -> object:
        """JSON's true is 1 to Python: ``"actual_duration": true`` would be stored as one second."""
        if isinstance(value, bool):
            raise ValueError(f"expected a number, got {str(value).lower()}")
        return value

    @property
    def row_key(self) -> str:
        return f"{self.model_key}:{self.test_case.key}"

    @property
    def answered(self) -> bool:
        """The system replied without error: with an answer, or with a reply that is no answer (a tool call),
        which is not the host's failure."""
        return self.error is None and (self.actual_output is not None or self.answer_absent is not None)


class TestLab(PersistedModel):
    __test__ = False

    name: str
    description: str = ""
    models: list[ModelHost] = Field(default_factory=list)
    rows: list[TestLabRow] = Field(default_factory=list)

    @model_validator(mode="after")
    def _model_keys_are_unique(self) -> "TestLab":
        """Two models with one key: rows could not say whose answer they hold."""
        first: dict[str, int] = {}
        for index, model in enumerate(self.models):
            if first.setdefault(model.key, index) != index:
                earlier = first[model.key]
                raise ValueError(f"models[{index}].key {model.key!r} is used twice (first at models[{earlier}])")
        return self

    @model_validator(mode="after")
    def _rows_name_known_models(self) -> "TestLab":
        known = {model.key for model in self.models}
        for index, row in enumerate(self.rows):
            if row.model_key not in known:
                raise ValueError(
                    f"rows[{index}].model_key {row.model_key!r} is not one of models[].key {sorted(known)}"
                )
        return self

    @model_validator(mode="after")
    def _each_case_answered_once_per_model(self) -> "TestLab":
        """A second row for the same (model, test case) would be scored and counted twice."""
        first_row: dict[tuple[str, str], int] = {}
        for index, row in enumerate(self.rows):
            first = first_row.setdefault((row.model_key, row.test_case.key), index)
            if first != index:
                raise ValueError(
                    f"rows[{index}]: duplicate of rows[{first}] (model {row.model_key}, test case {row.test_case.key})"
                )
        return self

    def model(self, key: str) -> ModelHost:
        for model in self.models:
            if model.key == key:
                return model
        raise KeyError(key)

    def rows_for(self, model_key: str) -> list[TestLabRow]:
        return [row for row in self.rows if row.model_key == model_key]
