"""Scoring an answer with an NLI backend: what ``groundedness`` reports when a cross-encoder is configured."""

from collections.abc import Sequence

from assay.evaluators._nli import NliBackend, answer_entailment
from assay.evaluators.base import Scored

from assay.models.evaluation import on_good_side


def passages_of(texts: Sequence[str]) -> list[str]:
    """The retrieved chunks an answer is checked against (blank chunks hold nothing to entail)."""
    return [text for text in texts if text.strip()]


def entailment_scored(nli: NliBackend, sentences: Sequence[str], passages: Sequence[str], threshold: float) -> Scored:
    """Each answer sentence's best entailment over the passages (and their windows); the least entailed sentence
    gives the score, and the share below ``threshold`` the ungrounded sentences."""
    support = nli.support(list(sentences), list(passages))
    below = sum(not on_good_side(sentence.entailment, threshold, True) for sentence in support)
    weakest = min(support, key=lambda sentence: sentence.entailment)
    return Scored(
        {
            "groundedness": round(answer_entailment(support), 6),
            "ungrounded_sentences": round(below / len(support), 6),
        },
        {
            "backend": nli.name,
            "least_grounded_sentence": weakest.sentence,
            "sentences": [
                {"sentence": s.sentence, "entailment": round(s.entailment, 6), "closest_context": passages[s.passage]}
                for s in support
            ],
        },
    )
