"""Groundedness: is every sentence of the answer stated by the retrieved context (seed 002)?

The seed's method embeds each answer sentence, takes its best cosine with any context sentence, and keeps
the least-supported sentence: ``min_a max_c cos(a, c)``. On its own it cannot see the hallucination that
matters most in a RAG answer: a fluent paraphrase of the context with one figure changed scores as high as
the truth, while a terse correct answer ("3.25% AER.") scores low for sharing little wording with any
sentence. The default ``hybrid`` method keeps the seed's shape (per-sentence support, least-supported
sentence wins) and makes each sentence's support

    max(semantic, lexical) x figure gate x name penalty

- semantic: the seed's best cosine with a context sentence (recognises rewording);
- lexical: the share of the sentence's content words and figures the context states (recognises terse
  restatement; inflections and typos matched with rapidfuzz);
- figure gate: 0 when the sentence states any figure (amount, percentage, time, phone number, count) that
  the context does not, after normalisation; a normalised figure absent from the evidence is a fabricated
  fact, whatever the wording around it;
- name penalty: x0.5 for each capitalised name (product, place, organisation) absent from the context;
  halved rather than zeroed because spotting names by capitals is a heuristic.

Sentences that assert nothing checkable ("Yes.", "Not all of them.") are left out of the minimum. Figures
and names the question states count as the user's framing. The choice of max (over a weighted mean) and of
the gates was made on the dev half of bench/data/groundedness_labelled.jsonl; bench/validity.py reports
every method on both halves. ``method`` selects the seed's method or the intermediate variants for
comparison.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from assay.embeddings import split_sentences
from assay.models.evaluation import EvaluatorSpec, MetricMeta
from evaluators._grounding import Evidence, clean
from evaluators._split_bound import check_bound, within_bound
from evaluators.base import CaseContext, Evaluator, Scored, Unscored
from evaluators.registry import register

METHODS = ("hybrid", "semantic", "semantic_gated", "lexical")
NAME_PENALTY = 0.5
SPLIT_INPUTS = ("actual_output", "retrieved_context")


@lru_cache(maxsize=8192)
def _sentences(text: str) -> tuple[str, ...]:
    """Sentences without Markdown layout or bare punctuation; memoised because prepare and score split the
    same texts."""
    cleaned = (clean(part).strip() for part in split_sentences(text))
    return tuple(sentence for sentence in cleaned if any(character.isalnum() for character in sentence))


@dataclass(frozen=True)
class SentenceSupport:
    """Why one answer sentence is (un)grounded: what ``explain`` returns for reports."""

    sentence: str
    support: float
    semantic: float
    lexical: float | None
    unsupported_figures: tuple[str, ...]
    unsupported_names: tuple[str, ...]
    closest_context: str | None

    @property
    def carries_claim(self) -> bool:
        return self.lexical is not None


@register
@dataclass
class Groundedness(Evaluator):
    spec = EvaluatorSpec(
        id="groundedness",
        display_name="Groundedness",
        description=(
            "Whether the actual answer only states what the retrieved context states. Each answer sentence is "
            "supported by its closest context sentence (embedding cosine) or by the context stating its "
            "content words and figures; a figure the context does not state (amounts, percentages, times, "
            "phone numbers, after normalisation) or an unknown name lowers the sentence's support, and the "
            "least-supported sentence gives the score. method='semantic' is the embedding-only original."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
        model_types=["rag"],
        required_inputs=["retrieved_context", "actual_output"],
        needs=["embeddings"],
        metrics=[
            MetricMeta(
                key="groundedness",
                display_name="Groundedness",
                description=(
                    "Support of the least-supported answer sentence by the retrieved context; below the "
                    "threshold the answer states facts the context does not (hallucination)."
                ),
                higher_is_better=True,
                threshold=0.75,
                is_primary=True,
            ),
            MetricMeta(
                key="ungrounded_sentences",
                display_name="Ungrounded sentences",
                description=(
                    "Share of the answer's claim-bearing sentences whose support is below the threshold: how "
                    "much of the answer is ungrounded, where the primary metric says whether any of it is."
                ),
                higher_is_better=False,
            ),
        ],
        keywords=["rag", "hallucination", "embeddings", "faithfulness", "figures"],
    )

    golden = {
        "good": {
            "question": "What rate does the Easy Access Saver pay on £20,000?",
            "retrieved_context": [
                "Easy Access Saver: Product Sheet\n- £10,000 to £49,999: 3.25% AER (3.20% gross p.a.)\n"
                "Interest is calculated daily and paid monthly."
            ],
            "actual_output": "3.25% AER.",
        },
        "bad": {
            "question": "What rate does the Easy Access Saver pay on £20,000?",
            "retrieved_context": [
                "Easy Access Saver: Product Sheet\n- £10,000 to £49,999: 3.25% AER (3.20% gross p.a.)\n"
                "Interest is calculated daily and paid monthly."
            ],
            "actual_output": (
                "Balances from £10,000 to £49,999 earn 3.50% AER (3.45% gross p.a.), and interest is "
                "calculated daily and paid monthly."
            ),
        },
    }

    method: str = field(
        default="hybrid",
        metadata={
            "description": (
                "hybrid: max(semantic, lexical) support gated by unsupported figures and names (default); "
                "semantic: the seed's embedding-only min-max cosine; semantic_gated: semantic support with the "
                "same gates; lexical: word and figure coverage with the same gates, no embeddings."
            )
        },
    )
    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the default threshold of the primary metric."}
    )

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"groundedness: method {self.method!r} is not one of {', '.join(METHODS)}")

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        if self.method == "lexical":
            return
        texts = {
            sentence
            for case in within_bound(cases, SPLIT_INPUTS)
            for text in (case.actual_output or "", *(chunk.text for chunk in case.retrieved_context))
            for sentence in _sentences(text)
        }
        if texts:
            self.services.embedder.embed(sorted(texts))

    def explain(self, case: CaseContext) -> list[SentenceSupport]:
        """Per-sentence support, in answer order: the least grounded sentence and what it lacks."""
        check_bound(case, SPLIT_INPUTS)
        answer = _sentences(case.actual_output or "")
        context = [sentence for chunk in case.retrieved_context for sentence in _sentences(chunk.text)]
        if not answer:
            raise Unscored(f"test case {case.test_case_key}: the actual answer has no sentence to check")
        if not context:
            raise Unscored(f"test case {case.test_case_key}: the retrieved context is empty")
        if self.method == "lexical":
            cosines = np.zeros((len(answer), len(context)))
        else:
            vectors = self.services.embedder.embed([*answer, *context])
            cosines = np.clip(vectors[: len(answer)] @ vectors[len(answer) :].T, 0.0, 1.0)
        evidence = Evidence((chunk.text for chunk in case.retrieved_context), case.question)
        return [self._support(sentence, row, context, evidence) for sentence, row in zip(answer, cosines, strict=True)]

    def _support(self, sentence: str, cosines: np.ndarray, context: list[str], evidence: Evidence) -> SentenceSupport:
        semantic = float(cosines.max())
        check = evidence.check(sentence)
        gate = (0.0 if check.unsupported_figures else 1.0) * NAME_PENALTY ** len(check.unsupported_names)
        lexical = check.lexical
        if self.method == "semantic":
            support = semantic
        elif self.method == "semantic_gated":
            support = semantic * gate
        elif self.method == "lexical":
            support = (lexical or 0.0) * gate
        else:
            support = max(semantic, lexical or 0.0) * gate
        return SentenceSupport(
            sentence=sentence,
            support=round(support, 6),
            semantic=round(semantic, 6),
            lexical=None if lexical is None else round(lexical, 6),
            unsupported_figures=check.unsupported_figures,
            unsupported_names=check.unsupported_names,
            closest_context=None if self.method == "lexical" else context[int(cosines.argmax())],
        )

    def score(self, case: CaseContext) -> Scored:
        supports = self.explain(case)
        if self.method != "semantic":
            supports = [support for support in supports if support.carries_claim] or supports
        threshold = self.threshold("groundedness")
        ungrounded = sum(support.support < threshold for support in supports) if threshold is not None else 0
        scores: dict[str, float | None] = {
            "groundedness": min(support.support for support in supports),
            "ungrounded_sentences": round(ungrounded / len(supports), 6),
        }
        weakest = min(supports, key=lambda support: support.support)
        return Scored(
            scores,
            {
                "least_grounded_sentence": weakest.sentence,
                "unsupported_figures": sorted({f for s in supports for f in s.unsupported_figures}),
                "unsupported_names": sorted({n for s in supports for n in s.unsupported_names}),
                "sentences": [
                    {"sentence": s.sentence, "support": round(s.support, 6), "closest_context": s.closest_context}
                    for s in supports
                ],
            },
        )
