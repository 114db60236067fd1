"""Looping detection: did the generation fall into a loop, repeating itself (seed 002).

Three views of repetition, as in the reference: the share of distinct sentences, how much of the text one
repeated substring covers, and how well the text compresses (a loop compresses far better than prose).
"""

import zlib
from collections import Counter
from dataclasses import dataclass, field

from assay.evaluators._split_bound import check_bound
from assay.evaluators.base import CaseContext, Evaluator, Scored, golden_pair, score_metric
from assay.evaluators.registry import register

from assay.embeddings import split_sentences
from assay.models.evaluation import EvaluatorSpec

_HASH_MODULUS = (1 << 61) - 1
_HASH_BASE = 1_000_003


_PREVIEW_CHARS = 200


def counted_sentences(text: str, min_chars: int) -> Counter[str]:
    """Occurrences of each sentence of at least ``min_chars`` characters, keyed by its whitespace-collapsed
    text: two sentences are the same when they agree case-folded, and the first occurrence names them."""
    first_seen: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for sentence in split_sentences(text):
        collapsed = " ".join(sentence.split())
        folded = collapsed.casefold()
        if len(folded) >= min_chars:  # measured folded, as the share always was ("ß" folds to "ss")
            counts[first_seen.setdefault(folded, collapsed)] += 1
    return counts


def share_of_distinct(counts: Counter[str]) -> float:
    """Distinct sentences over sentences; with none long enough nothing could repeat, so the share is 1."""
    total = counts.total()
    return len(counts) / total if total else 1.0


def unique_sentence_share(text: str, min_chars: int) -> float:
    """Distinct sentences over sentences of at least ``min_chars`` characters (whitespace and case folded)."""
    return share_of_distinct(counted_sentences(text, min_chars))


def _repeat_at(text: str, length: int, prefix: list[int], powers: list[int]) -> int | None:
    """Start of a substring of ``length`` that occurs again later without overlapping itself, or None."""
    first_seen: dict[int, int] = {}
    scale = powers[length]
    for start in range(len(text) - length + 1):
        digest = (prefix[start + length] - prefix[start] * scale) % _HASH_MODULUS
        earlier = first_seen.setdefault(digest, start)
        if start - earlier >= length and text[earlier : earlier + length] == text[start : start + length]:
            return earlier
    return None


def longest_repeated_substring(text: str) -> str:
    """The longest substring that occurs at least twice without the occurrences overlapping.

    Non-overlapping keeps "aaaa" from counting as "aaa" twice, and keeps length x frequency within the text's
    length. Found by binary search on the length (a repeat of length L implies one of L - 1) with a
    polynomial rolling hash, each hit confirmed by comparing the strings: O(n log n).
    """
    prefix = [0]
    powers = [1]
    for char in text:
        prefix.append((prefix[-1] * _HASH_BASE + ord(char)) % _HASH_MODULUS)
        powers.append(powers[-1] * _HASH_BASE % _HASH_MODULUS)
    low, high, best = 1, len(text) // 2, ""
    while low <= high:
        length = (low + high) // 2
        start = _repeat_at(text, length, prefix, powers)
        if start is None:
            high = length - 1
        else:
            best, low = text[start : start + length], length + 1
    return best


def repeated_substring_share(text: str) -> float:
    """Longest repeated substring x its (non-overlapping) frequency / text length."""
    repeated = longest_repeated_substring(text)
    return len(repeated) * text.count(repeated) / len(text) if repeated else 0.0


def compression_ratio(text: str) -> float:
    """zlib (level 9) size over UTF-8 size, capped at 1: short texts grow by zlib's fixed overhead."""
    raw = text.encode("utf-8")
    return min(1.0, len(zlib.compress(raw, 9)) / len(raw))


@register
@dataclass
class LoopingDetection(Evaluator):
    spec = EvaluatorSpec(
        id="looping_detection",
        display_name="Looping detection",
        description=(
            "Detects generations that went into a loop: the share of unique sentences (sentences shorter than "
            "10 characters omitted), the longest repeated substring times its frequency over the text length, "
            "and the zlib (level 9) compression ratio of the actual answer."
        ),
        domain="generation",
        problem_type="stability",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Ongoing Monitoring"],
        required_inputs=["actual_output"],
        metrics=[
            score_metric(
                "unique_sentences",
                "Unique sentences",
                "Unique sentences / all sentences, omitting sentences shorter than 10 characters.",
                primary=True,
            ),
            score_metric(
                "longest_repeated_substring",
                "Longest repeated substring",
                "Length of the longest (non-overlapping) repeated substring x its frequency / text length.",
                higher_is_better=False,
            ),
            score_metric(
                "compression_ratio",
                "Compression ratio",
                "Bytes after zlib compression (level 9) / bytes of the answer, capped at 1.",
            ),
        ],
        keywords=["repetition", "loop", "degeneration", "compression", "rules"],
    )

    golden = golden_pair(
        "The Easy Access Saver pays 3.25% AER. Interest is paid monthly. "
        "You can withdraw at any time without a penalty.",
        " ".join(["The Easy Access Saver pays 3.25% AER."] * 6),
    )

    min_sentence_chars: int = field(
        default=10, metadata={"description": "Sentences shorter than this are omitted from unique sentences."}
    )

    def score(self, case: CaseContext) -> Scored:
        check_bound(case, ("actual_output",))
        text = (case.actual_output or "").strip()
        counts = counted_sentences(text, self.min_sentence_chars)
        scores: dict[str, float | None] = {
            "unique_sentences": round(share_of_distinct(counts), 6),
            "longest_repeated_substring": round(repeated_substring_share(text), 6),
            "compression_ratio": round(compression_ratio(text), 6),
        }
        [(sentence, repeats)] = counts.most_common(1) or [("", 0)]
        if repeats < 2:
            return Scored(scores=scores)
        if len(sentence) > _PREVIEW_CHARS:
            sentence = sentence[: _PREVIEW_CHARS - 3] + "..."
        return Scored(scores=scores, details={"most_repeated_sentence": sentence, "repeats": repeats})
