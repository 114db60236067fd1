"""The learned groundedness model: a small logistic combination of offline signals, fitted on human labels.

No single offline signal reads groundedness well on data people labelled: token precision wins on
knowledge-grounded dialogue, in-order overlap of content words on Q², the rule-based ``hybrid`` support on
regulated-domain RAG answers. The model weighs four of them, all oriented so that more support scores higher
and all weights constrained to be non-negative (a signal of support never counts against an answer, which
keeps the model from learning one dataset's labelling conventions). A figure the context does not state caps
the score at the rule-based support (``groundedness_score``):

- ``unsupported_words``: minus log(1 + the number of the answer's content words the context never uses); a
  count, not a share, so a long faithful copy is not punished for its length and one invented phrase costs the
  same anywhere; stop words do not count, since a record's statements ("hours monday: 16:0-21:0") have none;
- ``ordered_overlap``: the longest in-order run of answer tokens found in the context (LCS), as a share of the
  answer: swapped roles ("Italian influenced French" for "French influenced Italian") lose it;
- ``ordered_content_overlap``: the same over content words only (stop words dropped on both sides);
- ``hybrid``: the rule-based sentence support (figures, names, attachment, polarity, MiniLM): see
  evaluators/groundedness.py;
- ``entailment`` and ``consistency`` (models fitted with them): the probability that the context entails the
  claim, and one minus the probability that it contradicts it, from Assay's own entailment model
  (evaluators/_claim_entailment.py): the signals that read meaning where words are shared or not.

The parameters live in ``assay/data/groundedness/model.json``, written by ``bench/fit_groundedness.py`` from the
labelled sets in ``bench/data/validity/``; its data card beside it says what it was fitted on and how well it
does on sets it never saw."""

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from assay.evaluators._grounding import STOPWORDS
from assay.evaluators._overlap import tokens
from rapidfuzz.distance import LCSseq

LEXICAL_FEATURES = ("unsupported_words", "ordered_overlap", "ordered_content_overlap", "hybrid")
ENTAILMENT_FEATURES = ("entailment", "consistency")
FEATURES = (*LEXICAL_FEATURES, *ENTAILMENT_FEATURES)
"""Every signal a model may weigh, in order; a model declares the ones it was fitted on (a prefix-compatible
subset: the lexical ones, or all)."""
MODEL_SCHEMA_VERSION = 1


def _in_order_share(answer: Sequence[str], context: Sequence[str]) -> float:
    return LCSseq.similarity(list(answer), list(context)) / len(answer) if answer else 1.0


def lexical_signals(answer: str, context: Sequence[str]) -> dict[str, float]:
    """The model's signals that need no embeddings, for one answer and its retrieved context."""
    answer_tokens, context_tokens = tokens(answer), tokens("\n".join(context))
    vocabulary = set(context_tokens)
    answer_content = [token for token in answer_tokens if token not in STOPWORDS]
    context_content = [token for token in context_tokens if token not in STOPWORDS]
    return {
        "unsupported_words": -math.log1p(sum(token not in vocabulary for token in answer_content)),
        "ordered_overlap": _in_order_share(answer_tokens, context_tokens),
        "ordered_content_overlap": _in_order_share(answer_content, context_content),
    }


@dataclass(frozen=True)
class GroundednessModel:
    """A fitted logistic model: standardised signals, non-negative weights, probability of "supported"."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    intercept: float
    version: str
    threshold: float = 0.5
    """The default cut, chosen with the fit on its training data (see the data card)."""

    @property
    def reads_entailment(self) -> bool:
        return "entailment" in self.features

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.intercept + sum(
            weight * (signals[name] - mean) / scale
            for name, mean, scale, weight in zip(self.features, self.mean, self.scale, self.weights, strict=True)
        )
        return 1 / (1 + math.exp(-z))

    @classmethod
    def from_document(cls, document: Mapping, source: str) -> "GroundednessModel":
        if document.get("schema_version") != MODEL_SCHEMA_VERSION:
            raise ValueError(f"{source}: field 'schema_version': expected {MODEL_SCHEMA_VERSION}")
        features = tuple(document.get("features", ()))
        if features not in (LEXICAL_FEATURES, FEATURES):
            raise ValueError(f"{source}: field 'features': expected {list(LEXICAL_FEATURES)} or {list(FEATURES)}")
        lengths = {len(document[key]) for key in ("mean", "scale", "weights")}
        if lengths != {len(features)}:
            raise ValueError(f"{source}: fields 'mean', 'scale', 'weights' need {len(features)} numbers each")
        return cls(
            features=features,
            mean=tuple(map(float, document["mean"])),
            scale=tuple(map(float, document["scale"])),
            weights=tuple(map(float, document["weights"])),
            intercept=float(document["intercept"]),
            version=str(document["version"]),
            threshold=float(document.get("threshold", 0.5)),
        )


def groundedness_score(model: GroundednessModel, signals: Mapping[str, float], figure_at_fault: bool) -> float:
    """The model's probability, capped by the rule-based support when an answer sentence states a figure the
    context does not state, or states of something else: the costliest error in a regulated answer, which no
    amount of shared wording should outweigh."""
    probability = model.probability(signals)
    return min(probability, signals["hybrid"]) if figure_at_fault else probability


def aggregate_claims(claim_scores: Sequence[float]) -> float:
    """An answer's score from its claims' probabilities: its weakest claim's, so one unsupported claim fails
    the answer however many supported ones surround it, on the same scale for one claim or ten."""
    return min(claim_scores)


@lru_cache(maxsize=1)
def packaged_model() -> GroundednessModel:
    """The model shipped in the package (read once per process)."""
    source = resources.files("assay") / "data" / "groundedness" / "model.json"
    return GroundednessModel.from_document(json.loads(source.read_text(encoding="utf-8")), str(source))
