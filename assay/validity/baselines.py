"""One-line baselines computed beside the evaluators in every validation: an evaluator that does not separate
acceptable from unacceptable answers better than these has not earned its place on that data.

Each baseline scores (answer, context) into one number, or leaves the row unscored with a reason (an empty
answer, no context): never 0. The MiniLM cosine embeds each distinct text once through the run's shared
embedding engine (``Services.embedder``); when no engine can load, that baseline is unavailable with the reason
and the others still run."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from assay.embeddings.engine import Embedder
from assay.evaluators._grounding import STOPWORDS
from assay.evaluators._overlap import answer_length, joined, token_f1, token_precision, tokens

Score = float | None


@dataclass(frozen=True)
class Baseline:
    id: str
    display_name: str
    higher_is_better: bool
    description: str


BASELINES: dict[str, Baseline] = {
    baseline.id: baseline
    for baseline in (
        Baseline("token_precision", "Token precision", True, "Share of the answer's words that occur in the context."),
        Baseline(
            "token_precision_content",
            "Token precision without stop words",
            True,
            "Share of the answer's words, stop words left out, that occur in the context.",
        ),
        Baseline("token_f1", "Token F1", True, "SQuAD-style token F1 of the answer against the context."),
        Baseline(
            "answer_length", "Answer length (shorter is better)", False, "Words in the answer; fewer scores higher."
        ),
        Baseline(
            "minilm_cosine",
            "MiniLM cosine answer vs context",
            True,
            "Cosine of the all-MiniLM-L6-v2 embeddings of the answer and of the joined context.",
        ),
    )
}


@dataclass(frozen=True)
class BaselineScores:
    """Per baseline, one value per row (None: unscored, with ``reasons``), and the baselines not computed."""

    values: dict[str, list[Score]]
    reasons: dict[str, list[str | None]]
    unavailable: dict[str, str]


def _lexical(answer: str, context: Sequence[str]) -> dict[str, tuple[Score, str | None]]:
    """The word-overlap baselines of one row, each with why it is unscored (None when scored)."""
    words = tokens(answer)
    if not words:
        return {name: (None, "the answer has no words") for name in ("token_precision", "token_precision_content",
                                                                      "token_f1", "answer_length")}  # fmt: skip
    no_context = None if tokens(joined(context)) else "the context has no words"
    content = [word for word in words if word not in STOPWORDS]
    return {
        "token_precision": (None if no_context else token_precision(answer, context), no_context),
        "token_precision_content": (
            (None, no_context or "the answer has only stop words")
            if no_context or not content
            else (token_precision(answer, context, without_stop_words=True), None)
        ),
        "token_f1": (None if no_context else token_f1(answer, context), no_context),
        "answer_length": (float(answer_length(answer)), None),
    }


def _cosines(
    answers: Sequence[str], contexts: Sequence[Sequence[str]], embedder: Callable[[], Embedder]
) -> tuple[list[Score], list[str | None]]:
    """Cosine of answer and joined context; each distinct text is embedded once."""
    pairs = [(answer.strip(), joined(context).strip()) for answer, context in zip(answers, contexts, strict=True)]
    distinct = sorted({text for pair in pairs for text in pair if text})
    if not distinct:
        return [None] * len(pairs), ["the answer or the context is empty"] * len(pairs)
    vectors = embedder().embed(distinct)
    index = {text: position for position, text in enumerate(distinct)}
    values: list[Score] = []
    reasons: list[str | None] = []
    for answer, context in pairs:
        if not answer or not context:
            values.append(None)
            reasons.append("the answer is empty" if not answer else "the context is empty")
            continue
        values.append(round(float(np.dot(vectors[index[answer]], vectors[index[context]])), 6))
        reasons.append(None)
    return values, reasons


def score_baselines(
    answers: Sequence[str],
    contexts: Sequence[Sequence[str]],
    embedder: Callable[[], Embedder] | None,
    chosen: Sequence[str] = tuple(BASELINES),
) -> BaselineScores:
    """Every chosen baseline over the rows; ``embedder`` gives the shared engine (None: no cosine baseline)."""
    unknown = sorted(set(chosen) - set(BASELINES))
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; known baselines: {', '.join(BASELINES)}")
    values: dict[str, list[Score]] = {name: [] for name in chosen if name != "minilm_cosine"}
    reasons: dict[str, list[str | None]] = {name: [] for name in values}
    for answer, context in zip(answers, contexts, strict=True):
        row = _lexical(answer, context)
        for name in values:
            value, reason = row[name]
            values[name].append(None if value is None else round(value, 6))
            reasons[name].append(reason)
    unavailable: dict[str, str] = {}
    if "minilm_cosine" in chosen:
        if embedder is None:
            unavailable["minilm_cosine"] = "no embedding engine configured"
        else:
            try:
                values["minilm_cosine"], reasons["minilm_cosine"] = _cosines(answers, contexts, embedder)
            except Exception as error:  # a missing model or runtime makes this baseline unavailable, not the run
                unavailable["minilm_cosine"] = f"{type(error).__name__}: {error}"
    return BaselineScores(values, reasons, unavailable)
