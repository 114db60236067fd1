"""Hallucination: a cross-encoder reads (retrieved context, answer) pairs and scores their consistency (seed 002).

The seed uses Vectara's hallucination evaluation model (HHEM), a cross-encoder with one output: the probability
that the answer is supported by the context. A cross-encoder attends over both texts at once, so it sees
contradictions an embedding cosine misses. Any NLI model with an entailment label serves as well (its
entailment probability is the score): both load through the shared NLI backend (``evaluators._nli``). The
retrieved chunks are joined into one premise; a context longer than the model's input is read in overlapping
windows and the best-supported window counts, so evidence late in the context is not truncated away.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluators._models import model_parameter
from assay.evaluators._nli import NliBackend, nli_unavailable_reason
from assay.evaluators.base import (
    CaseContext,
    Evaluator,
    Scored,
    Unscored,
    golden_pair,
    score_metric,
)
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

DEFAULT_MODEL = "vectara/hallucination_evaluation_model"
PURPOSE = "hallucination"


def premise_of(case: CaseContext) -> str:
    """The retrieved context as one premise, chunks in retrieval order."""
    return "\n".join(chunk.text.strip() for chunk in case.retrieved_context if chunk.text.strip())


@register
@dataclass
class Hallucination(Evaluator):
    spec = EvaluatorSpec(
        id="hallucination",
        display_name="Hallucination",
        description=(
            "Checks whether the actual answer states only facts supported by the retrieved context: a "
            "cross-encoder (default Vectara's hallucination evaluation model, or any NLI model with an entailment "
            "label) scores the (context, answer) pair; the score is the probability that the answer is consistent "
            "with the context, so low scores flag hallucination. Weights are read from a local folder only."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["retrieved_context", "actual_output"],
        needs=["model_weights"],
        metrics=[
            score_metric(
                "hallucination",
                "Hallucination",
                "Probability that the answer is factually consistent with the retrieved context "
                "(1 = fully supported, 0 = hallucinated).",
                primary=True,
            )
        ],
        keywords=["hallucination", "cross-encoder", "vectara", "hhem", "groundedness", "rag"],
    )

    golden = golden_pair(
        "The Easy Access Saver pays 3.25% AER on balances of £10,000 or more.",
        "The Easy Access Saver pays 7% AER on any balance and never allows withdrawals.",
        retrieved_context=[
            "The Easy Access Saver pays 3.25% AER on balances of £10,000 or more.",
            "Customers can make three free withdrawals a month.",
        ],
    )

    model: str = model_parameter(DEFAULT_MODEL, "one-output cross-encoder or NLI model")
    batch_size: int = field(default=16, metadata={"description": "(context, answer) pairs scored per forward pass."})

    def __post_init__(self) -> None:
        self._backend: NliBackend | None = None

    def unavailable_reason(self) -> str | None:
        return nli_unavailable_reason(self.model, purpose=PURPOSE, single_output=True)

    def _nli(self) -> NliBackend:
        """The shared NLI backend, loaded on first use; it remembers every pair it scored."""
        if self._backend is None:
            self._backend = NliBackend.load(self.model, purpose=PURPOSE, single_output=True, batch_size=self.batch_size)
        return self._backend

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        pairs = [(premise_of(case), (case.actual_output or "").strip()) for case in cases]
        pairs = [pair for pair in pairs if all(pair)]
        if pairs:
            self._nli().score_pairs(pairs)

    def score(self, case: CaseContext) -> Scored:
        pair = (premise_of(case), (case.actual_output or "").strip())
        if not all(pair):
            raise Unscored(f"test case {case.test_case_key}: the retrieved context or the actual answer is blank")
        nli = self._nli()
        [scored] = nli.score_pairs([pair])
        return Scored({"hallucination": round(scored.entailment, 6)}, {"backend": nli.name})
