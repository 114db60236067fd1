"""Faithfulness (Judge): the share of the answer's claims that the retrieved context supports (seed 002).

The judge first breaks the answer into atomic claims, then checks all of them against the retrieved chunks in
one call (numbered, one verdict each); the score is supported claims / claims. Unlike the embedding-based
groundedness, a changed figure in a fluent paraphrase is caught by the judge's reading, and the details show
which claim failed and why. An answer that makes no claim is unscored: there is nothing to be faithful about.
"""

from dataclasses import dataclass
from typing import ClassVar

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator
from assay.evaluators.base import CaseContext, Scored, golden_pair, score_metric
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

FAITHFULNESS_METRIC = score_metric(
    "faithfulness",
    "Faithfulness",
    "Share of the actual answer's claims that can be inferred from the retrieved context (claims inferable "
    "from the context / claims in the answer); below the threshold the answer states things the context "
    "does not (hallucination).",
    primary=True,
)

RATE_CONTEXT = [
    "Easy Access Saver: Product Sheet. Balances from £10,000 to £49,999 earn 3.25% AER. "
    "Interest is calculated daily and paid monthly."
]


@register
@dataclass
class Faithfulness(JudgedEvaluator):
    spec = EvaluatorSpec(
        id="faithfulness",
        display_name="Faithfulness (Judge)",
        description=(
            "The factual consistency of the actual answer with the retrieved context: the LLM judge breaks the "
            "answer into atomic claims and checks each against the context; the score is the share of claims "
            "the context supports."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["retrieved_context", "actual_output"],
        needs=["llm"],
        metrics=[FAITHFULNESS_METRIC],
        keywords=["rag", "hallucination", "faithfulness", "claims", "llm-judge", "ragas"],
    )
    golden = golden_pair(
        "Balances from £10,000 to £49,999 earn 3.25% AER. Interest is calculated daily.",
        "Balances from £10,000 to £49,999 earn 3.50% AER. Interest is paid yearly by cheque. "
        "Withdrawals need 90 days notice.",
        question="What rate does the Easy Access Saver pay on £20,000?",
        retrieved_context=RATE_CONTEXT,
    )
    cascade_proxy: ClassVar[str | None] = "groundedness"


    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        part = await _ragas.faithfulness(case, ask)
        return part.scored("faithfulness")
