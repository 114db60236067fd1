"""The RAG-assessment (Ragas-style) judged metrics: the judge calls and the formulas, shared by the single-metric
evaluators and by the ``ragas`` aggregate, so the aggregate computes exactly what the single evaluators do.

The judge is only asked for what needs language understanding (which claims an answer makes, whether a chunk
helps, which sentences matter); every count and ratio is computed here, so a score can always be traced back
to the per-item verdicts kept in the details. A verdict the judge did not give is never assumed: a claim left
without a verdict makes the case unscored, not unsupported.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from assay.evaluators._judged import CaseJudge, JudgeFailed
from assay.evaluators._sentence_similarity import sentences_of
from assay.evaluators._split_bound import check_bound
from assay.evaluators.base import CaseContext, Scored, Unscored

from assay.embeddings import Embedder

MAX_ITEMS = 50
"""Per-item verdicts kept in a case's details (claims, statements, chunks, sentences); the rest are counted."""


@dataclass(frozen=True)
class Part:
    """One metric's value for one case, the values it was built from, and the per-item evidence."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, float] = field(default_factory=dict)

    def scored(self, key: str) -> Scored:
        """The part as its own evaluator's result: the score under metric ``key``, the extra values beside it."""
        return Scored(scores={key: self.score, **self.extra}, details=self.details)


# -- formulas ------------------------------------------------------------------------------------------------


def rounded(value: float) -> float:
    """Six decimals, so a case scores identically whatever order its parts finished in."""
    return round(float(value), 6)


def share(hits: int, total: int) -> float:
    """``hits / total`` for a non-empty total (the callers make an empty total unscored)."""
    if total <= 0:
        raise ValueError("share of an empty total")
    return rounded(hits / total)


def average_precision(useful: Sequence[bool]) -> float:
    """Mean of precision@k over the ranks k holding a useful chunk; 0 when no chunk is useful.

    Relevant chunks at ranks 1 and 3 of 3 give (1/1 + 2/3) / 2: a useful chunk ranked below a useless one
    counts for less, which is what rewards putting the evidence first.
    """
    hits = 0
    total = 0.0
    for rank, is_useful in enumerate(useful, start=1):
        if is_useful:
            hits += 1
            total += hits / rank
    return rounded(total / hits) if hits else 0.0


def statement_f1(true_positives: int, false_positives: int, false_negatives: int) -> float:
    """F1 over statements: TP / (TP + (FP + FN) / 2)."""
    denominator = true_positives + 0.5 * (false_positives + false_negatives)
    if denominator <= 0:
        raise ValueError("F1 of no statements")
    return rounded(true_positives / denominator)


def harmonic_mean(values: Sequence[float]) -> float:
    """Harmonic mean of values in [0, 1]; any zero makes it zero (one failing dimension sinks the whole)."""
    if not values:
        raise ValueError("harmonic mean of nothing")
    if any(value <= 0 for value in values):
        return 0.0
    return rounded(len(values) / sum(1.0 / value for value in values))


def cosines(embedder: Embedder, anchor: str, others: Sequence[str]) -> list[float]:
    """Cosine of ``anchor`` with each of ``others``, clipped into [0, 1] (the engine returns unit vectors)."""
    vectors = embedder.embed([anchor, *others])
    return [rounded(value) for value in np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)]


# -- prompt helpers ------------------------------------------------------------------------------------------


def bounded(name: str, items: list[Any]) -> dict[str, Any]:
    """``{name: the first MAX_ITEMS items}``, plus ``{name}_omitted`` with the count left out."""
    kept: dict[str, Any] = {name: items[:MAX_ITEMS]}
    if len(items) > MAX_ITEMS:
        kept[f"{name}_omitted"] = len(items) - MAX_ITEMS
    return kept


def numbered(items: Sequence[str]) -> str:
    """``1. item`` lines, one item per line, so verdicts can name items by number."""
    return "\n".join(f"{number}. {' '.join(item.split())}" for number, item in enumerate(items, start=1))


def context_text(case: CaseContext) -> str:
    """The retrieved chunks in rank order, each headed by its rank; blank chunks are left out."""
    chunks = [chunk.text.strip() for chunk in case.retrieved_context if chunk.text.strip()]
    if not chunks:
        raise Unscored(f"test case {case.test_case_key}: the retrieved context is empty")
    return "\n\n".join(f"[{rank}] {text}" for rank, text in enumerate(chunks, start=1))


def _texts(values: Any) -> list[str]:
    return [" ".join(str(value).split()) for value in values or [] if str(value).strip()]


# -- the metrics ---------------------------------------------------------------------------------------------


async def faithfulness(case: CaseContext, ask: CaseJudge) -> Part:
    """Claims of the answer inferable from the retrieved context / claims in the answer."""
    context = context_text(case)
    found = await ask("ragas_claims", step="claims", question=case.question, answer=case.actual_output or "")
    claims = _texts(found.get("claims"))
    if not claims:
        raise Unscored(
            f"test case {case.test_case_key}: the judge found no factual claim in the answer, so there is "
            "nothing to check against the context",
            details={"claims_rationale": found.get("rationale", "")},
        )
    checked = await ask("ragas_claim_verification", step="verify", context=context, claims=numbered(claims))
    verdicts = _by_number(checked.get("verdicts"), "claim", len(claims))
    missing = [number for number in range(1, len(claims) + 1) if number not in verdicts]
    items = [
        {"claim": claim, "supported": verdicts[number]["supported"], "reason": verdicts[number].get("reason", "")}
        if number in verdicts else {"claim": claim, "supported": None, "reason": "no verdict from the judge"}
        for number, claim in enumerate(claims, start=1)
    ]  # fmt: skip
    details = {"rationale": checked.get("rationale", ""), **bounded("claims", items)}
    if missing:
        raise Unscored(
            f"test case {case.test_case_key}: the judge gave no verdict for claim(s) {_listed(missing)} of "
            f"{len(claims)}",
            details=details,
        )
    supported = sum(bool(item["supported"]) for item in items)
    details["supported_claims"] = supported
    details["total_claims"] = len(claims)
    return Part(share(supported, len(claims)), details)


async def answer_relevancy(case: CaseContext, ask: CaseJudge, embedder: Embedder, count: int) -> Part:
    """Mean cosine of the question with the questions the judge writes for the answer; 0 if noncommittal."""
    verdict = await ask("ragas_question_generation", step="questions", answer=case.actual_output or "", count=count)
    generated = _texts(verdict.get("questions"))[:count]
    noncommittal = bool(verdict.get("noncommittal"))
    details: dict[str, Any] = {"rationale": verdict.get("rationale", ""), "noncommittal": noncommittal}
    if noncommittal:
        details["questions"] = [{"question": question, "similarity": None} for question in generated]
        return Part(0.0, details)
    if not generated:
        raise Unscored(f"test case {case.test_case_key}: the judge wrote no question for the answer", details=details)
    similarities = cosines(embedder, case.question, generated)
    details["questions"] = [
        {"question": question, "similarity": value} for question, value in zip(generated, similarities, strict=True)
    ]
    return Part(rounded(sum(similarities) / len(similarities)), details)


async def context_precision(case: CaseContext, ask: CaseJudge) -> Part:
    """Average precision of the ranked chunks, a chunk counting as relevant when it helped reach the
    expected answer (one judge call per chunk, concurrently)."""
    chunks = [chunk for chunk in case.retrieved_context if chunk.text.strip()]
    if not chunks:
        raise Unscored(f"test case {case.test_case_key}: the retrieved context is empty")
    verdicts = await asyncio.gather(
        *(
            ask("ragas_chunk_usefulness", step=f"chunk {rank}", question=case.question,
                expected=case.expected_output, chunk=chunk.text)
            for rank, chunk in enumerate(chunks, start=1)
        ),
        return_exceptions=True,
    )  # fmt: skip
    for verdict in verdicts:
        if isinstance(verdict, BaseException):
            raise verdict
    useful = [bool(verdict["useful"]) for verdict in verdicts]  # type: ignore[index]
    items = [
        {"rank": rank, "doc_uri": chunk.doc_uri, "useful": flag, "rationale": verdict.get("rationale", "")}  # type: ignore[union-attr]
        for rank, (chunk, flag, verdict) in enumerate(zip(chunks, useful, verdicts, strict=True), start=1)
    ]
    details = {"useful_chunks": sum(useful), "total_chunks": len(chunks), **bounded("chunks", items)}
    return Part(average_precision(useful), details)


async def context_recall(case: CaseContext, ask: CaseJudge) -> Part:
    """Statements of the expected answer attributable to the retrieved context / statements."""
    context = context_text(case)
    verdict = await ask(
        "ragas_statement_attribution", step="attribution", question=case.question, context=context,
        expected=case.expected_output,
    )  # fmt: skip
    items = [
        {"statement": " ".join(str(item["statement"]).split()), "attributed": bool(item["attributed"])}
        for item in verdict.get("statements") or []
        if str(item.get("statement", "")).strip()
    ]
    details: dict[str, Any] = {"rationale": verdict.get("rationale", ""), **bounded("statements", items)}
    if not items:
        raise Unscored(
            f"test case {case.test_case_key}: the judge found no statement in the expected answer", details=details
        )
    attributed = sum(item["attributed"] for item in items)
    details["attributed_statements"] = attributed
    details["total_statements"] = len(items)
    return Part(share(attributed, len(items)), details)


async def context_relevancy(case: CaseContext, ask: CaseJudge) -> Part:
    """Context sentences the judge picks as needed for the question / all context sentences (split here,
    so the total does not depend on how the judge counts)."""
    check_bound(case, ("retrieved_context",))
    all_sentences = [sentence for chunk in case.retrieved_context for sentence in sentences_of(chunk.text)]
    if not all_sentences:
        raise Unscored(f"test case {case.test_case_key}: the retrieved context has no sentence")
    verdict = await ask(
        "ragas_relevant_sentences", step="sentences", question=case.question, sentences=numbered(all_sentences)
    )
    picked = [number for number in verdict.get("relevant") or [] if isinstance(number, int)]
    relevant = sorted({number for number in picked if 1 <= number <= len(all_sentences)})
    ignored = sorted({number for number in picked if not 1 <= number <= len(all_sentences)})
    chosen = set(relevant)
    items = [{"sentence": sentence, "relevant": number in chosen}
             for number, sentence in enumerate(all_sentences, start=1)]  # fmt: skip
    details: dict[str, Any] = {
        "rationale": verdict.get("rationale", ""),
        "relevant_sentences": len(relevant),
        "total_sentences": len(all_sentences),
        **bounded("sentences", items),
    }
    if ignored:
        details["ignored_sentence_numbers"] = ignored[:MAX_ITEMS]
    return Part(share(len(relevant), len(all_sentences)), details)


async def answer_correctness(
    case: CaseContext, ask: CaseJudge, embedder: Embedder, factuality_weight: float, semantic_weight: float
) -> Part:
    """Weighted mean of the statement F1 (answer vs expected answer) and their embedding cosine."""
    verdict = await ask(
        "ragas_statement_overlap", step="statements", question=case.question, answer=case.actual_output or "",
        expected=case.expected_output,
    )  # fmt: skip
    answer_items = [
        {"statement": " ".join(str(item["statement"]).split()), "in_expected": bool(item["in_expected"])}
        for item in verdict.get("answer_statements") or [] if str(item.get("statement", "")).strip()
    ]  # fmt: skip
    expected_items = [
        {"statement": " ".join(str(item["statement"]).split()), "in_answer": bool(item["in_answer"])}
        for item in verdict.get("expected_statements") or [] if str(item.get("statement", "")).strip()
    ]  # fmt: skip
    true_positives = sum(item["in_expected"] for item in answer_items)
    false_positives = len(answer_items) - true_positives
    false_negatives = sum(not item["in_answer"] for item in expected_items)
    details: dict[str, Any] = {
        "rationale": verdict.get("rationale", ""),
        "true_positives": true_positives,
        "false_positives": false_positives,
        "false_negatives": false_negatives,
        **bounded("answer_statements", answer_items),
        **bounded("expected_statements", expected_items),
    }
    if true_positives + false_positives + false_negatives == 0:
        raise Unscored(
            f"test case {case.test_case_key}: the judge found no statement in the answer or the expected answer",
            details=details,
        )
    factual = statement_f1(true_positives, false_positives, false_negatives)
    semantic = cosines(embedder, case.actual_output or "", [case.expected_output])[0]
    combined = (factuality_weight * factual + semantic_weight * semantic) / (factuality_weight + semantic_weight)
    return Part(rounded(combined), details, extra={"factual_f1": factual, "semantic_similarity": semantic})


# -- helpers -------------------------------------------------------------------------------------------------


def _by_number(verdicts: Any, key: str, count: int) -> dict[int, dict[str, Any]]:
    """Verdicts by item number (1..count); the first verdict for a number wins, others are ignored."""
    found: dict[int, dict[str, Any]] = {}
    for verdict in verdicts or []:
        number = verdict.get(key)
        if isinstance(number, int) and 1 <= number <= count and number not in found:
            found[number] = verdict
    return found


def _listed(numbers: list[int]) -> str:
    shown = ", ".join(str(number) for number in numbers[:10])
    return shown + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")


def part_failure(name: str, error: BaseException) -> str:
    """How an unscored or failed part is named in the aggregate's reason."""
    if isinstance(error, (Unscored, JudgeFailed)):
        return f"{name}: {error}"
    return f"{name}: evaluator error: {type(error).__name__}: {error}"
