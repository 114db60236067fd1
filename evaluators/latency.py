"""Latency: end-to-end seconds the system under test took to answer a case (seeds 001/003).

The value is the duration the host measured for the test-lab row; Assay never times a case after the fact,
so a row without a duration is unscored. The seeds define no threshold; ``DEFAULT_LATENCY_SECONDS`` is
Assay's documented default for an interactive assistant, meant to be overridden with the system's own SLO.
"""

from dataclasses import dataclass
from typing import ClassVar

from assay.evaluators.base import CaseContext, Evaluator, Unscored, quantity_metric
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

DEFAULT_LATENCY_SECONDS = 10.0
# The declared range needs a finite ceiling: a day is beyond any host timeout, a longer duration is a clock bug.
MAX_LATENCY_SECONDS = 86_400.0


@register
@dataclass
class Latency(Evaluator):
    threshold_note: ClassVar[str] = "Set it to the latency objective (seconds) of the system under test."
    spec = EvaluatorSpec(
        id="latency",
        display_name="Latency",
        description=(
            "End-to-end latency in seconds of answering each case, as measured by the host (retrieval and "
            "generation together). Lower is better."
        ),
        domain="generation",
        problem_type="efficiency",
        compliance=["SR 11-7: Ongoing Monitoring", "NIST: Valid and Reliable"],
        required_inputs=["duration"],
        metrics=[
            quantity_metric(
                "latency_seconds",
                "Latency (seconds)",
                f"Seconds from request to answer (default threshold {DEFAULT_LATENCY_SECONDS:.0f} s, an Assay "
                "default: the seeds define none).",
                ceiling=MAX_LATENCY_SECONDS,
                threshold=DEFAULT_LATENCY_SECONDS,
                primary=True,
                aggregate_name="agent/latency_seconds/average",
            )
        ],
        keywords=["latency", "performance", "monitoring", "slo"],
    )

    golden = {"good": {"duration": 1.8}, "bad": {"duration": 42.5}}


    def score(self, case: CaseContext) -> dict[str, float | None]:
        duration = case.duration
        if duration is None or not 0.0 <= duration <= MAX_LATENCY_SECONDS:
            raise Unscored(
                f"test case {case.test_case_key}: the host reported a duration of {duration} s, "
                f"expected 0 to {MAX_LATENCY_SECONDS:.0f}"
            )
        return {"latency_seconds": round(duration, 6)}
