"""A scheduled re-validation's outcome: which baseline it was measured against (and on whose authority), the
gates, the regressions, and whether the run must fail so that an automation can notify someone."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from assay.models.base import PersistedModel
from assay.models.gates import GateReport


class BaselineApproval(BaseModel):
    name: str = Field(description="The re-validation this baseline serves, e.g. 'revalidation'.")
    run_id: str
    approved_by: str = Field(description="The person who approved it, or 'deployment parameter'.")
    source: Literal["person", "deployment parameter"]
    approved_at: datetime
    note: str = ""


class RevalidationVerdict(PersistedModel):
    name: str
    run_id: str | None
    baseline: BaselineApproval | None = None
    baseline_note: str = Field(default="", description="Why nothing was compared, when no baseline was.")
    significantly_worse: int = 0
    significantly_better: int = 0
    newly_failing: int = 0
    new_problems: int = 0
    fail_on_regression: bool = True
    gates: GateReport
    breached: bool
    reasons: list[str] = Field(default_factory=list, description="Why the run fails; empty when it passes.")
