"""Hallucination: a cross-encoder reads (retrieved context, answer) pairs and scores their consistency (seed 002).

The seed uses Vectara's hallucination evaluation model (HHEM), a sentence-transformers ``CrossEncoder`` with one
output: the probability that the answer is supported by the context. A cross-encoder attends over both texts at
once, so it sees contradictions an embedding cosine misses. The retrieved chunks are joined into one premise;
when the pair is too long the tokenizer trims the longer side (the context) first.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.models.evaluation import EvaluatorSpec, MetricMeta
from evaluators._models import find_model, label_names, load_once, max_input_length, read_config, require_model
from evaluators.base import CaseContext, Evaluator, Unscored
from evaluators.registry import register

DEFAULT_MODEL = "vectara/hallucination_evaluation_model"


def _load_cross_encoder(folder: Path) -> Any:
    from sentence_transformers import CrossEncoder

    encoder = CrossEncoder(str(folder), device="cpu", local_files_only=True)
    encoder.max_seq_length = max_input_length(read_config(folder), encoder.tokenizer)
    return encoder


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
            "cross-encoder (default Vectara's hallucination evaluation model) scores the (context, answer) pair; "
            "the score is the probability that the answer is consistent with the context, so low scores flag "
            "hallucination. Weights are read from a local folder only."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["retrieved_context", "actual_output"],
        needs=["model_weights"],
        metrics=[
            MetricMeta(
                key="hallucination",
                display_name="Hallucination",
                description=(
                    "Probability that the answer is factually consistent with the retrieved context "
                    "(1 = fully supported, 0 = hallucinated)."
                ),
                higher_is_better=True,
                threshold=0.75,
                is_primary=True,
            )
        ],
        keywords=["hallucination", "cross-encoder", "vectara", "hhem", "groundedness", "rag"],
    )

    golden = {
        "good": {
            "retrieved_context": [
                "The Easy Access Saver pays 3.25% AER on balances of £10,000 or more.",
                "Customers can make three free withdrawals a month.",
            ],
            "actual_output": "The Easy Access Saver pays 3.25% AER on balances of £10,000 or more.",
        },
        "bad": {
            "retrieved_context": [
                "The Easy Access Saver pays 3.25% AER on balances of £10,000 or more.",
                "Customers can make three free withdrawals a month.",
            ],
            "actual_output": "The Easy Access Saver pays 7% AER on any balance and never allows withdrawals.",
        },
    }

    model: str = field(
        default=DEFAULT_MODEL,
        metadata={
            "description": "Local folder of the one-output cross-encoder, or its name looked up under "
            "$ASSAY_MODELS_DIR and the offline Hugging Face cache; never downloaded."
        },
    )
    batch_size: int = field(default=16, metadata={"description": "(context, answer) pairs scored per forward pass."})
    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the default threshold of the primary metric."}
    )

    def __post_init__(self) -> None:
        self._scored: dict[tuple[str, str], float] = {}

    def unavailable_reason(self) -> str | None:
        folder, reason = find_model("hallucination", self.model)
        if folder is None:
            return reason
        outputs = len(label_names(read_config(folder)))
        if outputs != 1:
            return f"hallucination model {self.model!r} has {outputs} outputs; a one-output cross-encoder is needed"
        return None

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        pairs = list(dict.fromkeys((premise_of(case), (case.actual_output or "").strip()) for case in cases))
        pairs = [pair for pair in pairs if all(pair) and pair not in self._scored]
        if not pairs:
            return
        import torch

        encoder = load_once("cross-encoder", require_model("hallucination", self.model), _load_cross_encoder)
        with torch.no_grad():
            scores = encoder.predict(
                pairs, batch_size=self.batch_size, activation_fn=torch.nn.Sigmoid(), show_progress_bar=False
            )
        for pair, value in zip(pairs, scores, strict=True):
            self._scored[pair] = round(float(value), 6)

    def score(self, case: CaseContext) -> dict[str, float | None]:
        pair = (premise_of(case), (case.actual_output or "").strip())
        if not all(pair):
            raise Unscored(f"test case {case.test_case_key}: the retrieved context or the actual answer is blank")
        if pair not in self._scored:
            self.prepare([case])
        return {"hallucination": self._scored[pair]}
