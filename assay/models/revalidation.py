"""A scheduled re-validation's outcome: which baseline it was measured against (and on whose authority), the
gates, the regressions, and whether the run must fail so that an automation can notify someone."""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from assay.models.base import PersistedModel
from assay.models.comparison import Coverage
from assay.models.gates import GateReport

VERDICT_SCHEMA_VERSION = 2
"""2: ``verdict`` (pass, fail, not comparable, no baseline) and ``compared``; older documents get ``verdict``
from ``breached`` and whether a baseline was named."""

Verdict = Literal["pass", "fail", "not comparable", "no baseline"]
FAILED_VERDICTS: tuple[Verdict, ...] = ("fail", "not comparable")
"""The verdicts that end a re-validation run Failed."""


class BaselineApproval(BaseModel):
    name: str = Field(description="The re-validation this baseline serves, e.g. 'revalidation'.")
    run_id: str
    approved_by: str = Field(description="The person who approved it, or 'deployment parameter'.")
    source: Literal["person", "deployment parameter"]
    via: str = Field(
        default="command line", description="Where the person approved it: 'command line' or 'prefect-ui'."
    )
    approved_at: datetime
    note: str = ""
    run_verdict: Verdict | None = Field(
        default=None,
        description="The approved run's own re-validation verdict (revalidation/verdict.json) when it was approved; "
        "None: not a re-validation run, or approved before the verdict was recorded.",
    )
    failed_run_reason: str = Field(
        default="", description="Why a run whose re-validation failed was approved all the same (required then)."
    )


class BaselineCandidate(BaseModel):
    """What a person is shown before approving a run as a baseline, and the run's own verdict."""

    facts: dict[str, str] = Field(description="Label -> value, in the order shown (the verdict first).")
    run_verdict: Verdict | None = Field(description="The run's re-validation verdict; None: not a re-validation.")

    @property
    def failed(self) -> bool:
        return self.run_verdict in FAILED_VERDICTS


class RevalidationVerdict(PersistedModel):
    schema_version: int = VERDICT_SCHEMA_VERSION
    verdict: Verdict = Field(
        description="pass: compared with the baseline, nothing failed; fail: a gate, --fail-on or a regression; "
        "not comparable: a baseline was named but no test case was scored in both runs on any metric (the run "
        "fails: no regression can be concluded); no baseline: none approved yet, or the run is the baseline."
    )
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
    compared: Coverage | None = Field(
        default=None, description="What the comparison with the baseline compared and left out; None without one."
    )

    @model_validator(mode="before")
    @classmethod
    def _verdict_of_version_1(cls, data: Any) -> Any:
        """A version-1 document has no ``verdict``: it failed when breached, else passed if it had a baseline."""
        if isinstance(data, dict) and "verdict" not in data:
            verdict = "fail" if data.get("breached") else "pass" if data.get("baseline") else "no baseline"
            return {**data, "verdict": verdict}
        return data
