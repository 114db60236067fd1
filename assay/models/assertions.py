"""Deterministic assertions on a response (seed 004, Prompt Foundry)."""

from typing import Any, Literal, get_args

from pydantic import Field, FiniteFloat, model_validator

from assay.models.base import DomainModel

AssertionType = Literal[
    "EXACT_MATCH",
    "CONTAINS_ALL",
    "CONTAINS_ANY",
    "STARTS_WITH",
    "TOOL_CALLED",
    "TOOL_CALLED_WITH",
    "TOOL_CALLED_IN_ORDER",
    "LATENCY",
    "COST",
]
"""Seed 004's types, plus TOOL_CALLED_IN_ORDER, an Assay extension for agents that must call tools in order."""
_NEEDS_THRESHOLD = {"LATENCY", "COST"}
_NEEDS_TARGETS = set(get_args(AssertionType)) - _NEEDS_THRESHOLD


class Assertion(DomainModel):
    """One rule a response must satisfy.

    ``targets`` are the values compared (strings may use ``{{variable}}`` templates); for TOOL_CALLED and
    TOOL_CALLED_WITH ``targets[0]`` is the tool name and ``arguments`` the expected arguments; for
    TOOL_CALLED_IN_ORDER (an Assay extension) ``targets`` are tool names that must be called in that relative
    order, other calls in between allowed. ``threshold`` is seconds for LATENCY and currency units for COST.
    ``json_path`` (``$``-rooted) selects a value of a JSON response to compare; ``turn`` selects an assistant
    turn of the case's conversation instead of the final answer. ``negate`` is the NOT modifier.
    """

    type: AssertionType
    targets: list[str] = Field(default_factory=list)
    arguments: dict[str, Any] = Field(default_factory=dict)
    threshold: FiniteFloat | None = Field(default=None, ge=0)
    negate: bool = False
    ignore_case: bool = False
    json_path: str | None = Field(default=None, pattern=r"^\$")
    turn: int | None = None
    weight: FiniteFloat = Field(default=1.0, ge=0, le=1)

    @model_validator(mode="after")
    def _has_what_its_type_needs(self) -> "Assertion":
        if self.type in _NEEDS_TARGETS and not self.targets:
            raise ValueError(f"{self.type} needs at least one value in 'targets'")
        if self.type in _NEEDS_THRESHOLD and self.threshold is None:
            raise ValueError(f"{self.type} needs a 'threshold'")
        return self
