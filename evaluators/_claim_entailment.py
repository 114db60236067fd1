"""Whether the context entails each claim, read by Assay's own entailment model: the signals of meaning in the
learned groundedness model.

Word overlap cannot tell "French cuisine influenced Italian cooking" from its role swap, nor accept a correct
claim in words of its own. An entailment model can, within what it was trained on. Each claim is read against
one short premise: the context sentences that share most words with it, in context order, within
``PREMISE_WORDS`` words. That is how the model's training premises were built from long evidence
(bench/fit_entailment.py imports ``premise_for`` from here), so training and use read alike, and one pair per
claim keeps the cost to a model call per claim whatever the context's length.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex
from assay.evaluators._nli import NliBackend

PREMISE_WORDS = 110
_WORD = regex.compile(r"[a-z0-9]+")


@lru_cache(maxsize=65536)
def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def premise_for(claim: str, sentences: Sequence[str], budget: int = PREMISE_WORDS) -> str:
    """The context sentences sharing most words with ``claim``, in context order, within ``budget`` words (the
    best one always, however long)."""
    claim_words = _words(claim)
    ranked = sorted(range(len(sentences)), key=lambda index: -len(claim_words & _words(sentences[index])))
    chosen: list[int] = []
    used = 0
    for index in ranked:
        size = len(sentences[index].split())
        if used + size <= budget or not chosen:
            chosen.append(index)
            used += size
    return " ".join(sentences[index] for index in sorted(chosen))


@dataclass(frozen=True)
class ClaimEntailment:
    premise: str
    entailment: float
    contradiction: float


def entailment_pairs(claims: Sequence[str], sentences: Sequence[str]) -> list[tuple[str, str]]:
    """(premise, claim) for each claim: what the entailment model reads."""
    return [(premise_for(claim, sentences), claim) for claim in claims]


def claim_entailments(
    backend: NliBackend, claims: Sequence[str], sentences: Sequence[str]
) -> list[ClaimEntailment]:
    """Each claim's entailment and contradiction probabilities against its premise, in one batched call."""
    pairs = entailment_pairs(claims, sentences)
    scored = backend.score_pairs(pairs)
    return [
        ClaimEntailment(premise, pair.entailment, pair.contradiction or 0.0)
        for (premise, _), pair in zip(pairs, scored, strict=True)
    ]


def entailment_signals(entailment: ClaimEntailment) -> dict[str, float]:
    """The learned model's signals from one claim's entailment: more support scores higher in both."""
    return {
        "entailment": round(entailment.entailment, 6),
        "consistency": round(1 - entailment.contradiction, 6),
    }
