"""Findings that turn scores into decisions (seed 002 "Problems and insights")."""

from typing import Any, Literal

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel

Severity = Literal["high", "medium", "low"]


class Problem(DomainModel):
    description: str
    severity: Severity
    problem_type: str = Field(description="privacy, security, fairness, accuracy, retrieval, stability, ...")
    problem_code: str = Field(description="AVID taxonomy code, e.g. 'AVID / P0204 / Accuracy'.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="model, evaluator, metric, test case...")
    actions: list[str] = Field(default_factory=list)


class Insight(DomainModel):
    description: str
    insight_type: str = Field(description="best model, worst model, weak point, fastest, cheapest, ...")
    attributes: dict[str, Any] = Field(default_factory=dict)
    actions: list[str] = Field(default_factory=list)


class Findings(PersistedModel):
    problems: list[Problem] = Field(default_factory=list)
    insights: list[Insight] = Field(default_factory=list)
