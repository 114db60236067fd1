"""Summarization completeness and faithfulness without a reference summary (seed 002, after SummaC).

Faithfulness is SummaC ZS: an NLI model fills a matrix of entailment probabilities, premise = each source
sentence, hypothesis = each summary sentence; a summary sentence is as faithful as the source sentence that
best entails it, and the score is the mean over summary sentences. Sentence-level pairs keep each NLI input
short, which is what NLI models were trained on.

SummaC Conv (``evaluators._summac_conv``) reads the same matrix through the trained layers of the SummaC
release when ``summac_conv_weights`` names them; without them it is unscored with the reason, never guessed.

Completeness follows the seed: the embedding similarity between the source and the *faithful* part of the
summary (summary sentences whose best entailment reaches ``faithful_sentence_threshold``). The cosine of the
two sentence-embedding centroids rewards a summary that covers the source's content, and unfaithful sentences
cannot buy coverage; a summary with no faithful sentence has completeness 0.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from assay.evaluators._models import model_parameter
from assay.evaluators._nli import NliBackend, nli_unavailable_reason
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators._summac_conv import ConvLayers, ConvWeightsProblem
from assay.evaluators.base import (
    CaseContext,
    Evaluator,
    Scored,
    Unscored,
    cosine,
    golden_pair,
    score_metric,
)
from assay.evaluators.registry import register

from assay.embeddings import split_sentences
from assay.models.evaluation import EvaluatorSpec, on_good_side

SPLIT_INPUTS = ("question", "retrieved_context", "actual_output")

DEFAULT_MODEL = "tals/albert-xlarge-vitaminc-mnli"
PURPOSE = "summarization NLI"
SOURCES = ("auto", "question", "retrieved_context")


def _centroid(vectors: np.ndarray) -> np.ndarray:
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


@register
@dataclass
class SummarizationCompletenessFaithfulness(Evaluator):
    spec = EvaluatorSpec(
        id="summarization_completeness_faithfulness",
        display_name="Summarization (completeness and faithfulness)",
        description=(
            "Judges the actual answer as a summary of the source (the retrieved context when there is one, "
            "else the question/prompt) without a reference summary. Faithfulness (SummaC ZS): mean over summary "
            "sentences of the best NLI entailment probability from any source sentence (default NLI model "
            "tals/albert-xlarge-vitaminc-mnli). Completeness: embedding cosine between the source and the "
            "faithful summary sentences. SummaC Conv: the trained layers of the SummaC release (summac_conv_weights) "
            "over the same NLI probabilities. NLI weights are read from a local folder only."
        ),
        domain="summarization",
        tasks=["summarization"],
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["question", "actual_output"],
        needs=["model_weights", "embeddings"],
        metrics=[
            score_metric(
                "completeness",
                "Completeness",
                "Cosine similarity of the source's and the faithful summary sentences' embedding centroids "
                "(0 when no summary sentence is faithful).",
                primary=True,
            ),
            score_metric(
                "faithfulness_summac_zs",
                "Faithfulness (SummaC ZS)",
                "Mean over summary sentences of the highest entailment probability given any source sentence.",
            ),
            score_metric(
                "faithfulness_summac_conv",
                "Faithfulness (SummaC Conv)",
                "Probability that the summary is consistent, from the trained SummaC Conv layers over each summary "
                "sentence's histogram of entailment probabilities; unscored (with the reason in the case details) "
                "unless summac_conv_weights names the trained layers.",
                threshold=0.5,
            ),
        ],
        keywords=["summarization", "summac", "nli", "faithfulness", "completeness"],
    )

    golden = golden_pair(
        "The Easy Access Saver pays 3.25% AER from £10,000. Below £10,000 the Easy Access "
        "Saver pays 2.10% AER. Easy Access Saver interest is paid monthly.",
        "The Easy Access Saver is a five-year fixed bond that pays no interest at all.",
        categories=["summarization"],
        question="Summarise the Easy Access Saver terms.",
        retrieved_context=[
            "The Easy Access Saver pays 3.25% AER on balances of £10,000 or more. "
            "The Easy Access Saver pays 2.10% AER on balances below £10,000. "
            "Interest on the Easy Access Saver is paid monthly."
        ],
    )

    model: str = model_parameter(DEFAULT_MODEL, "NLI classifier")
    source: str = field(
        default="auto",
        metadata={
            "description": "What was summarised: 'retrieved_context', 'question', or 'auto' (the retrieved "
            "context when the case has one, else the question)."
        },
    )
    entailment_label: str | None = field(
        default=None,
        metadata={
            "description": "The NLI model's entailment label in its id2label; by default the label named "
            "entailment (or SUPPORTS)."
        },
    )
    faithful_sentence_threshold: float = field(
        default=0.5,
        metadata={"description": "Best entailment probability from which a summary sentence counts as faithful."},
    )
    batch_size: int = field(default=32, metadata={"description": "Sentence pairs classified per forward pass."})
    summac_conv_weights: str = field(
        default="",
        metadata={
            "description": "Local file of SummaC Conv's trained layers for the NLI model (for the default model, "
            "summac_conv_vitc_sent_perc_e.bin from the SummaC release); empty: SummaC Conv is unscored."
        },
    )

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"parameter source must be one of {', '.join(SOURCES)}, got {self.source!r}")
        self._backend: NliBackend | None = None
        self._conv: ConvLayers | str | None = None

    def unavailable_reason(self) -> str | None:
        return nli_unavailable_reason(self.model, purpose=PURPOSE, entailment_label=self.entailment_label)

    def _nli(self) -> NliBackend:
        """The shared NLI backend, loaded on first use; it remembers every pair it scored."""
        if self._backend is None:
            self._backend = NliBackend.load(
                self.model, purpose=PURPOSE, entailment_label=self.entailment_label, batch_size=self.batch_size
            )
        return self._backend

    def _conv_layers(self) -> ConvLayers | str:
        """SummaC Conv's trained layers, or why there are none (loaded once)."""
        if self._conv is None:
            if not self.summac_conv_weights.strip():
                self._conv = "SummaC Conv unavailable: no trained layers configured (parameter summac_conv_weights)"
            else:
                try:
                    self._conv = ConvLayers.load(self.summac_conv_weights)
                except ConvWeightsProblem as error:
                    self._conv = f"SummaC Conv unavailable: {error}"
        return self._conv

    def _sentences(self, case: CaseContext) -> tuple[list[str], list[str]]:
        """(source sentences, summary sentences) of one case."""
        use_context = self.source == "retrieved_context" or (self.source == "auto" and case.retrieved_context)
        if use_context:
            source = [sentence for chunk in case.retrieved_context for sentence in split_sentences(chunk.text)]
        else:
            source = split_sentences(case.question)
        return source, split_sentences(case.actual_output or "")

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        pairs: dict[tuple[str, str], None] = {}
        sentences: dict[str, None] = {}
        for case in within_bound(cases, SPLIT_INPUTS):
            source, summary = self._sentences(case)
            sentences.update(dict.fromkeys(source + summary))
            pairs.update(dict.fromkeys((premise, hypothesis) for hypothesis in summary for premise in source))
        if sentences:
            self.services.embedder.embed(list(sentences))
        if pairs:
            self._nli().score_pairs(list(pairs))

    def score(self, case: CaseContext) -> Scored:
        check_bound(case, SPLIT_INPUTS)
        source, summary = self._sentences(case)
        if not source:
            raise Unscored(f"test case {case.test_case_key}: the source to summarise ({self.source}) is empty")
        if not summary:
            raise Unscored(f"test case {case.test_case_key}: the actual answer has no sentences")
        nli = self._nli()
        pairs = nli.score_pairs([(premise, hypothesis) for premise in source for hypothesis in summary])
        matrix = np.array([pair.entailment for pair in pairs]).reshape(len(source), len(summary))
        best = matrix.max(axis=0)
        threshold = self.faithful_sentence_threshold
        entailed = on_good_side(best, threshold, True)
        faithful = [sentence for sentence, good in zip(summary, entailed, strict=True) if good]
        completeness = 0.0
        if faithful:
            source_vectors = self.services.embedder.embed(source)
            faithful_vectors = self.services.embedder.embed(faithful)
            completeness = cosine(_centroid(source_vectors), _centroid(faithful_vectors))
        scores: dict[str, float | None] = {
            "completeness": round(completeness, 6),
            "faithfulness_summac_zs": round(float(best.mean()), 6),
            "faithfulness_summac_conv": None,
        }
        details = {"backend": nli.name}
        conv = self._conv_layers()
        if isinstance(conv, str):
            details["faithfulness_summac_conv"] = conv
        else:
            scores["faithfulness_summac_conv"] = round(conv.consistency(matrix), 6)
        return Scored(scores, details)
