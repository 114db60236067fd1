"""Token count: how many tokens answering a case cost, as the host reported them (seeds 001/003).

Tokens approximate cost, so fewer is better. The counts come from the host (``input_tokens`` and
``output_tokens`` of the test-lab row); Assay never estimates them, so a host that reports none leaves the
case unscored, and one that reports only one side leaves the total unscored while keeping the known side.
The seeds define no threshold; ``DEFAULT_TOTAL_TOKENS`` is Assay's documented default, meant to be overridden
with the budget of the system under test.
"""

from dataclasses import dataclass
from typing import ClassVar

from assay.evaluators.base import CaseContext, Evaluator, Unscored, quantity_metric
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta

# A RAG prompt with a handful of retrieved chunks plus a paragraph of answer stays well under this.
DEFAULT_TOTAL_TOKENS = 4000.0
# The declared range needs a finite ceiling; no real generation comes near it, a count above it is a host bug.
MAX_TOKENS = 1e9


def _count_metric(key: str, display_name: str, description: str, aggregate_name: str) -> MetricMeta:
    primary = key == "total_token_count"
    return quantity_metric(
        key,
        display_name,
        description,
        ceiling=MAX_TOKENS,
        threshold=DEFAULT_TOTAL_TOKENS if primary else None,
        primary=primary,
        aggregate_name=aggregate_name,
    )


@register
@dataclass
class TokenCount(Evaluator):
    threshold_note: ClassVar[str] = "Set it to the token budget of the system under test."
    spec = EvaluatorSpec(
        id="token_count",
        display_name="Token count",
        description=(
            "Tokens spent answering each case, as reported by the host: input (prompt and retrieved context), "
            "output (generated answer) and their total, which approximates the cost. Lower is better."
        ),
        domain="generation",
        problem_type="cost",
        compliance=["SR 11-7: Ongoing Monitoring", "NIST: Valid and Reliable"],
        required_inputs=["tokens"],
        metrics=[
            _count_metric(
                "total_token_count",
                "Total token count",
                f"Input plus output tokens of the case (default threshold {DEFAULT_TOTAL_TOKENS:.0f}, an Assay "
                "default: the seeds define none).",
                "agent/total_token_count/average",
            ),
            _count_metric(
                "input_token_count",
                "Input token count",
                "Tokens sent to the model: prompt, instructions and retrieved context.",
                "agent/input_token_count/average",
            ),
            _count_metric(
                "output_token_count",
                "Output token count",
                "Tokens the model generated.",
                "agent/output_token_count/average",
            ),
        ],
        keywords=["cost", "tokens", "performance", "monitoring"],
    )

    golden = {
        "good": {"input_tokens": 850, "output_tokens": 120},
        "bad": {"input_tokens": 9000, "output_tokens": 1500},
    }


    def score(self, case: CaseContext) -> dict[str, float | None]:
        counts = {"input_token_count": case.input_tokens, "output_token_count": case.output_tokens}
        for key, count in counts.items():
            if count is not None and count < 0:
                raise Unscored(f"test case {case.test_case_key}: the host reported a negative {key} ({count})")
        known = {key: float(count) for key, count in counts.items() if count is not None}
        if len(known) < len(counts):
            absent = ", ".join(key for key in counts if key not in known)
            raise Unscored(
                f"test case {case.test_case_key}: the host reported no {absent}, so the total is unknown",
                scores=dict(known),
            )
        total = sum(known.values())
        if total > MAX_TOKENS:
            raise Unscored(f"test case {case.test_case_key}: the host reported {total:.0f} tokens, beyond any real run")
        return {"total_token_count": total, **known}
