"""RAGAS (Judge): one score for retrieval and generation together, the harmonic mean of faithfulness, answer
relevancy, context precision and context recall (seed 002).

The four parts are computed here with the same functions as their own evaluators (no other evaluator is
run), concurrently for a case. The harmonic mean is dominated by the weakest part, so a pipeline cannot hide a
poor retriever behind a fluent generator. When any part cannot be scored the aggregate is unscored, naming
the part and why; the parts that were scored are kept.
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from assay.evaluators import _ragas
from assay.evaluators._judged import CaseJudge, JudgedEvaluator
from assay.evaluators.answer_relevancy_llm import ANSWER_RELEVANCY_METRIC
from assay.evaluators.base import CaseContext, Scored, Unscored, score_metric
from assay.evaluators.context_precision import CONTEXT_PRECISION_METRIC
from assay.evaluators.context_recall import CONTEXT_RECALL_METRIC
from assay.evaluators.faithfulness import FAITHFULNESS_METRIC, RATE_CONTEXT
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta

PARTS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def _part_metric(metric: MetricMeta) -> MetricMeta:
    return metric.model_copy(update={"is_primary": False})


@register
@dataclass
class Ragas(JudgedEvaluator):
    spec = EvaluatorSpec(
        id="ragas",
        display_name="RAGAS (Judge)",
        description=(
            "Overall quality of a RAG answer, retrieval and generation together: the harmonic mean of "
            "faithfulness (generation), answer relevancy (retrieval and generation), context precision and "
            "context recall (retrieval), each judged by the LLM judge as in its own evaluator."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["question", "expected_output", "retrieved_context", "actual_output"],
        needs=["llm", "embeddings"],
        metrics=[
            score_metric(
                "ragas",
                "RAGAS",
                "Harmonic mean of faithfulness, answer relevancy, context precision and context recall; "
                "low when any one of them is low.",
                primary=True,
            ),
            _part_metric(FAITHFULNESS_METRIC),
            _part_metric(ANSWER_RELEVANCY_METRIC),
            _part_metric(CONTEXT_PRECISION_METRIC),
            _part_metric(CONTEXT_RECALL_METRIC),
        ],
        keywords=["rag", "ragas", "harmonic mean", "faithfulness", "relevancy", "precision", "recall", "llm-judge"],
    )
    golden = {
        "good": {
            "question": "What interest rate does the Easy Access Saver pay on £20,000?",
            "expected_output": "Balances from £10,000 to £49,999 earn 3.25% AER.",
            "retrieved_context": RATE_CONTEXT,
            "actual_output": "The Easy Access Saver pays an interest rate of 3.25% AER on balances from £10,000.",
        },
        "bad": {
            "question": "What interest rate does the Easy Access Saver pay on £20,000?",
            "expected_output": "Balances from £10,000 to £49,999 earn 3.25% AER.",
            "retrieved_context": ["Branch opening hours are 9am to 5pm on weekdays. Parking is free for customers."],
            "actual_output": "Our branches open at 9am on weekdays and parking is free.",
        },
    }

    questions: int = field(
        default=3, metadata={"description": "How many questions the judge generates for answer relevancy (default 3)."}
    )

    def __post_init__(self) -> None:
        if not 1 <= self.questions <= 10:
            raise ValueError(f"ragas: questions must be between 1 and 10, not {self.questions}")

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        outcomes = await asyncio.gather(
            _ragas.faithfulness(case, ask),
            self._answer_relevancy(case, ask),
            _ragas.context_precision(case, ask),
            _ragas.context_recall(case, ask),
            return_exceptions=True,
        )
        scores: dict[str, float | None] = {}
        details: dict[str, Any] = {}
        failures: list[str] = []
        for name, outcome in zip(PARTS, outcomes, strict=True):
            if isinstance(outcome, _ragas.Part):
                scores[name] = outcome.score
                details[name] = outcome.details
                continue
            if not isinstance(outcome, Exception):  # KeyboardInterrupt, cancellation: not ours to record
                raise outcome
            failures.append(_ragas.part_failure(name, outcome))
            details[name] = {"unscored": str(outcome), **getattr(outcome, "details", {})}
        if failures:
            raise Unscored(
                f"ragas: {len(failures)} of {len(PARTS)} parts unscored: " + "; ".join(failures),
                scores=scores,
                details=details,
            )
        scores["ragas"] = _ragas.harmonic_mean([scores[name] for name in PARTS])  # type: ignore[misc]
        return Scored(scores=scores, details=details)

    async def _answer_relevancy(self, case: CaseContext, ask: CaseJudge) -> _ragas.Part:
        return await _ragas.answer_relevancy(case, ask, self.services.embedder, self.questions)
