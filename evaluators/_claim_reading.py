"""One claim's support as the rule-based groundedness builds it, split at the embedding model.

A claim's support is ``mean(semantic, lexical, local) x gate`` (evaluators/groundedness.py). Everything but
two terms is read from words, figures and names: the semantic cosine with the closest context sentence and the
partial credit for words the context says with a near synonym need the encoder, and the polarity cue needs to
know which context sentence is closest. Both enter the support monotonically and are bounded (a cosine is
clipped to [0, 1], a word's credit too), so a claim's support lies between the values at the two ends before
any embedding is computed. Floating-point sums, products and ``round`` are monotone, so the bounds hold for the
computed values exactly, not only on paper.

That is what lets a live check skip the encoder for claims that cannot change the verdict
(``deciding_claims``): the guardrail's cost is the model's forward pass over the answer's new sentences.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from assay.models.evaluation import straddles

POLARITY_PENALTY = 0.8


@dataclass(frozen=True)
class ClaimReading:
    """A claim's support before the embedding model: what its words, figures, names and the records say."""

    sentence: str
    lexical: float | None
    """Share of its content words and figures the context states (None: it has none, nothing to check)."""
    missing_words: tuple[str, ...]
    units: int
    local: float | None
    gate: float
    """Figures, names, attachment and derivation: every penalty except polarity's."""
    unsupported_figures: tuple[str, ...]
    unsupported_names: tuple[str, ...]
    flips: tuple[bool, ...]
    """Per context sentence: whether the claim's polarity differs from it, were it the closest."""
    contradicted_by_record: tuple[str, ...] = ()

    @property
    def carries_claim(self) -> bool:
        return self.lexical is not None


def combined_support(reading: ClaimReading, rules: str, semantic: float, word_credit: float, flipped: bool) -> float:
    """The claim's support under ``rules`` from its two embedding terms (cosine, synonym credit) and whether its
    closest context sentence flips polarity; rounded as reported."""
    if reading.contradicted_by_record:
        return 0.0
    lexical = reading.lexical
    if rules == "hybrid" and lexical is not None and reading.missing_words:
        lexical += word_credit / reading.units
    gate = reading.gate * (POLARITY_PENALTY if rules == "hybrid" and flipped else 1.0)
    if rules == "semantic":
        support = semantic
    elif rules == "semantic_gated":
        support = semantic * gate
    elif rules == "lexical":
        support = (lexical or 0.0) * gate
    else:
        local = reading.local
        support = (semantic if lexical is None or local is None else (semantic + lexical + local) / 3) * gate
    return round(support, 6)


def support_bounds(reading: ClaimReading, rules: str) -> tuple[float, float]:
    """The least and the most the claim's support can be, whatever the embedding model says."""
    flips = reading.flips or (False,)
    lowest = combined_support(reading, rules, 0.0, 0.0, any(flips))
    highest = combined_support(reading, rules, 1.0, float(len(reading.missing_words)), all(flips))
    return lowest, highest


def deciding_claims(bounds: Sequence[tuple[float, float]], threshold: float | None) -> list[int]:
    """The claims whose exact score is needed for an answer's exact score and count of ungrounded claims.

    The score is the weakest claim's, so only a claim whose lower bound does not exceed every upper bound can
    be the weakest; a claim counts as ungrounded below ``threshold``, so one whose bounds lie on both sides of
    it must be scored. Every other claim's side of the threshold is known, and it is not the weakest."""
    if not bounds:
        return []
    weakest_possible = min(high for _, high in bounds)
    return [
        index
        for index, (low, high) in enumerate(bounds)
        if low <= weakest_possible or (threshold is not None and straddles(low, high, threshold))
    ]
