"""Groundedness: is every sentence of the answer stated by the retrieved context (seed 002)?

The seed's method embeds each answer sentence, takes its best cosine with any context sentence, and keeps
the least-supported sentence: ``min_a max_c cos(a, c)``. On its own it cannot see the hallucination that
matters most in a RAG answer: a fluent paraphrase of the context with one figure changed scores as high as
the truth, while a terse correct answer ("3.25% AER.") scores low for sharing little wording with any
sentence. The default ``hybrid`` method keeps the seed's shape (per-sentence support, least-supported
sentence wins) and makes each sentence's support

    mean(semantic, lexical, local) x figure gate x name, attachment, derivation and polarity penalties

- semantic: the seed's best cosine with a context sentence (recognises rewording);
- lexical: the share of the sentence's content words and figures the context states (recognises terse
  restatement; inflections and typos matched with rapidfuzz; a word the context only says with a near
  synonym earns partial credit from its best MiniLM cosine with a context word);
- local: the largest share of those words one context sentence holds (a correct answer mostly restates one
  passage; a wrong-entity answer borrows its subject from another);
- figure gate: 0 when the sentence states a figure (amount, percentage, time, phone number, count, duration)
  the context does not, after normalisation and in a unit that does not disagree ("350 days" is not "£350");
- penalties: x0.5 per capitalised name absent from the context (a heuristic, so halved, not zeroed); x0.5
  per figure the context attaches to something else (evaluators/_attachment.py); x0.5 per figure only derived
  as a sum or difference of stated ones; x0.8 when the sentence's polarity differs from its closest
  context passage's (evaluators/_polarity.py; a cue, so mild).

Sentences that assert nothing checkable ("Yes.", "Not all of them.") are left out of the minimum. Figures
and names the question states count as the user's framing. The mean (over the earlier max of semantic and
lexical), the cues, their weights and the threshold were chosen on the dev split of the independent set
bench/data/groundedness_independent.jsonl only (threshold: the one maximising the worst kind's pass rate on
dev); bench/validity.py reports every method on dev and held-out, and the old generated set apart. ``method``
selects the seed's method or the intermediate variants for comparison.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from assay.embeddings import split_sentences
from assay.models.evaluation import EvaluatorSpec, MetricMeta
from evaluators._attachment import Clause, claim_units, clauses, local_coverage, misattributed
from evaluators._grounding import Evidence, clean, content_words, figures
from evaluators._polarity import polarity_flipped
from evaluators._split_bound import check_bound, within_bound
from evaluators.base import CaseContext, Evaluator, Scored, Unscored
from evaluators.registry import register

METHODS = ("hybrid", "semantic", "semantic_gated", "lexical")
NAME_PENALTY = 0.5
MISATTRIBUTED_PENALTY = 0.5
WORD_FLOOR, WORD_FULL = 0.5, 0.8
POLARITY_PENALTY = 0.8
DERIVED_PENALTY = 0.5
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
    local: float | None = None

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
            "supported by its closest context sentence (embedding cosine), by the context stating its content "
            "words and figures, and by one context sentence holding them; a figure the context does not state "
            "(amounts, percentages, times, durations, phone numbers, after normalisation), a figure the context "
            "attaches to something else, an unknown name or a flipped negation lowers the sentence's support, "
            "and the least-supported sentence gives the score. method='semantic' is the embedding-only original."
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
                threshold=0.55,
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
                "hybrid: mean of semantic, lexical and single-passage support, gated by unsupported, misattributed "
                "or derived figures, unknown names and flipped negation (default); "
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
        bounded = list(within_bound(cases, SPLIT_INPUTS))
        all_texts = [
            text for case in bounded for text in (case.actual_output or "", *(c.text for c in case.retrieved_context))
        ]
        texts = {sentence for text in all_texts for sentence in _sentences(text)}
        if self.method == "hybrid":
            texts |= {word for text in all_texts for word in content_words(text)}
        if texts:
            self.services.embedder.embed(sorted(texts))

    def explain(self, case: CaseContext) -> list[SentenceSupport]:
        """Per-sentence support, in answer order: the least grounded sentence and what it lacks."""
        check_bound(case, SPLIT_INPUTS)
        answer = _sentences(case.actual_output or "")
        located = [(sentence, chunk.text) for chunk in case.retrieved_context for sentence in _sentences(chunk.text)]
        context = [sentence for sentence, _ in located]
        if not answer:
            raise Unscored(f"test case {case.test_case_key}: the actual answer has no sentence to check")
        if not context:
            raise Unscored(f"test case {case.test_case_key}: the retrieved context is empty")
        if self.method == "lexical":
            cosines = np.zeros((len(answer), len(context)))
        else:
            vectors = self.services.embedder.embed([*answer, *context])
            cosines = np.clip(vectors[: len(answer)] @ vectors[len(answer) :].T, 0.0, 1.0)
        texts = [chunk.text for chunk in case.retrieved_context]
        evidence, figure_clauses = Evidence(texts, case.question), clauses(texts)
        passages = [claim_units(sentence) for sentence in context]
        return [
            self._support(sentence, row, located, evidence, (figure_clauses, passages), case.question or "")
            for sentence, row in zip(answer, cosines, strict=True)
        ]

    def _support(
        self,
        sentence: str,
        cosines: np.ndarray,
        context: list[tuple[str, str]],
        evidence: Evidence,
        attachment: tuple[list[Clause], list[set[str]]],
        question: str,
    ) -> SentenceSupport:
        semantic = float(cosines.max())
        check = evidence.check(sentence)
        lexical = check.lexical
        if self.method == "hybrid" and lexical is not None and check.missing_words:
            lexical += self._word_credit(check.missing_words, evidence) / check.units
        sentence_figures = figures(sentence, bare_one=False)
        stated = [figure for figure in sentence_figures if evidence.states(figure)]
        figure_clauses, passages = attachment
        moved = tuple(figure.text for figure in misattributed(sentence, stated, figure_clauses, question))
        gate = (0.0 if check.unsupported_figures else 1.0) * NAME_PENALTY ** len(check.unsupported_names)
        gate *= MISATTRIBUTED_PENALTY ** len(moved)
        gate *= DERIVED_PENALTY ** sum(evidence.derives(figure) for figure in sentence_figures)
        closest, chunk = context[int(cosines.argmax())]
        flipped = self.method == "hybrid" and polarity_flipped(sentence, closest, chunk)
        gate *= POLARITY_PENALTY if flipped else 1.0
        local = None if lexical is None else local_coverage(sentence, passages, question)
        if self.method == "semantic":
            support = semantic
        elif self.method == "semantic_gated":
            support = semantic * gate
        elif self.method == "lexical":
            support = (lexical or 0.0) * gate
        else:
            support = (semantic if lexical is None or local is None else (semantic + lexical + local) / 3) * gate
        return SentenceSupport(
            sentence=sentence,
            support=round(support, 6),
            semantic=round(semantic, 6),
            lexical=None if lexical is None else round(lexical, 6),
            unsupported_figures=check.unsupported_figures + moved,
            unsupported_names=check.unsupported_names,
            closest_context=None if self.method == "lexical" else closest,
            local=None if local is None else round(local, 6),
        )

    def _word_credit(self, missing: tuple[str, ...], evidence: Evidence) -> float:
        """Partial credit for answer words the context does not spell but says with a near synonym ("pets" for
        "animals", "daily" for "every day"): each word's best cosine with a context word, mapped linearly from
        WORD_FLOOR (no credit) to WORD_FULL (a full match)."""
        vocabulary = evidence.content_vocabulary
        if not vocabulary:
            return 0.0
        vectors = self.services.embedder.embed([*missing, *vocabulary])
        best = (vectors[: len(missing)] @ vectors[len(missing) :].T).max(axis=1)
        return float(np.clip((best - WORD_FLOOR) / (WORD_FULL - WORD_FLOOR), 0.0, 1.0).sum())

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
