"""Word overlap between an answer and its context: the one-line baselines every groundedness score must beat,
and lexical signals of the learned groundedness model; also the spec shared by the n-gram overlap scores of an
answer against the expected answer (BLEU, ROUGE), and the golden cases they share with the other scores of an
answer against the expected answer (BERTScore, answer semantic similarity).

Tokens are lower-cased runs of letters or digits, so "3.25%" gives "3" and "25" and "don't" gives "don" and
"t": crude on purpose, because the baselines quoted beside our figures (shared/validity/README.md) are the
plain "share of the answer's words that occur in the context"."""

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import regex
from assay.evaluators._grounding import STOPWORDS
from assay.evaluators.base import golden_pair

from assay.models.evaluation import EvaluatorSpec, MetricMeta

_TOKEN = regex.compile(r"[\p{L}\p{N}]+")



def reference_overlap_spec(
    id: str, display_name: str, description: str, metrics: list[MetricMeta], keywords: Sequence[str]
) -> EvaluatorSpec:
    """The spec of an n-gram overlap score of the actual answer against the expected answer (BLEU, ROUGE): what
    differs is its row of arguments; the domain, compliance and inputs are the same for all."""
    return EvaluatorSpec(
        id=id,
        display_name=display_name,
        description=description,
        domain="summarization",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["expected_output", "actual_output"],
        metrics=metrics,
        keywords=list(keywords),
    )


def reference_answer_golden(good_answer: str) -> dict[str, dict[str, Any]]:
    """The golden cases of a score of the actual answer against the expected answer (BLEU, ROUGE, BERTScore,
    answer semantic similarity): ``good_answer`` against one expected answer about the savings rate, and an
    off-topic answer that shares no n-gram with it."""
    return golden_pair(
        good_answer,
        "Our branches open at 9am on Saturdays.",
        expected_output="The Easy Access Saver pays 3.25% AER on balances from £10,000.",
    )

@lru_cache(maxsize=16384)
def tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text.lower()))


def joined(context: str | Iterable[str]) -> str:
    return context if isinstance(context, str) else "\n".join(context)


def token_precision(answer: str, context: str | Iterable[str], *, without_stop_words: bool = False) -> float | None:
    """Share of the answer's tokens that occur in the context; None when the answer has no token to check."""
    answer_tokens = [t for t in tokens(answer) if not (without_stop_words and t in STOPWORDS)]
    if not answer_tokens:
        return None
    vocabulary = set(tokens(joined(context)))
    return sum(token in vocabulary for token in answer_tokens) / len(answer_tokens)


def token_f1(answer: str, context: str | Iterable[str]) -> float | None:
    """SQuAD-style token F1 of the answer against the context (bag of tokens, counts clipped)."""
    answer_counts, context_counts = Counter(tokens(answer)), Counter(tokens(joined(context)))
    if not answer_counts or not context_counts:
        return None
    common = sum((answer_counts & context_counts).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(answer_counts.values()), common / sum(context_counts.values())
    return 2 * precision * recall / (precision + recall)


def ngram_precision(answer: str, context: str | Iterable[str], n: int) -> float | None:
    """Share of the answer's n-grams (of tokens) that occur in the context: whole phrases, not loose words."""
    answer_tokens, context_tokens = tokens(answer), tokens(joined(context))
    grams = [answer_tokens[i : i + n] for i in range(len(answer_tokens) - n + 1)]
    if not grams:
        return None
    known = {context_tokens[i : i + n] for i in range(len(context_tokens) - n + 1)}
    return sum(gram in known for gram in grams) / len(grams)


def answer_length(answer: str) -> int:
    return len(tokens(answer))
