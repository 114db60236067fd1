"""Fact-check: does the actual answer contain false information, judged against the case's own documents?

The manual's evaluator hands the answer to a web-searching agent. Ours is an agent over the retrieved
context instead, so a verdict is reproducible and cites what it saw: the judge splits the answer into atomic
claims; for each claim the best passages (sentences of the retrieved chunks, ranked by TF-IDF similarity to
the claim) are retrieved; the judge then rules on each claim with only those passages: supported, refuted or
not enough evidence. The score is the share of claims not refuted (1.0: no false information found), as the
manual's metric is higher-is-better. A claim that shares no term with any passage is "not enough evidence"
without a call.
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from assay.evaluators._judged import CaseJudge, JudgedEvaluator, judged_spec
from assay.evaluators.base import CaseContext, Scored, Unscored, golden_pair, score_metric
from assay.evaluators.registry import register

from assay.embeddings import split_sentences

MAX_CLAIMS = 20
"""Claims checked per answer; the rest are counted in the details (each claim costs one judge call)."""
PASSAGE_CHARS = 600
"""A passage longer than this is cut, in the prompt and in the details."""
VERDICTS = ("supported", "refuted", "not_enough_evidence")


@dataclass(frozen=True)
class Passage:
    chunk: int
    doc_uri: str | None
    text: str


def passages_of(case: CaseContext) -> list[Passage]:
    """The retrieved context as sentence-sized passages, each remembering its chunk."""
    return [
        Passage(index, chunk.doc_uri, sentence[:PASSAGE_CHARS])
        for index, chunk in enumerate(case.retrieved_context)
        for sentence in split_sentences(chunk.text)
    ]


def best_passages(claim: str, passages: list[Passage], limit: int) -> list[tuple[Passage, float]]:
    """Up to ``limit`` passages most similar to ``claim`` (TF-IDF cosine), best first; none that share no term."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english")
    try:
        matrix = vectorizer.fit_transform([claim, *(passage.text for passage in passages)])
    except ValueError:  # only stop words: nothing to rank on
        return []
    similarities = (matrix[1:] @ matrix[0].T).toarray().ravel()
    ranked = sorted(range(len(passages)), key=lambda index: (-similarities[index], index))
    return [(passages[index], round(float(similarities[index]), 4)) for index in ranked[:limit]
            if similarities[index] > 0]  # fmt: skip


def _rendered(found: list[tuple[Passage, float]]) -> str:
    return "\n".join(f"{number}. {passage.text}" for number, (passage, _score) in enumerate(found, start=1))


def _shown(found: list[tuple[Passage, float]]) -> list[dict[str, Any]]:
    return [{"chunk": passage.chunk, "similarity": score, "text": passage.text}
            | ({"doc_uri": passage.doc_uri} if passage.doc_uri else {}) for passage, score in found]  # fmt: skip


@register
@dataclass
class FactCheck(JudgedEvaluator):
    spec = judged_spec(
        "fact_check",
        "Fact-check (Judge)",
        "Fact-checks the actual answer against the case's retrieved documents: the LLM judge splits the "
        "answer into claims, the best passages of the retrieved context are found for each claim (TF-IDF), "
        "and the judge rules each claim supported, refuted or not enough evidence from those passages only. "
        "The score is the share of claims not refuted. Cases without retrieved context are unscored.",
        [
            score_metric(
                "fact_check",
                "Fact-check",
                "Share of the answer's claims that the retrieved documents do not refute: 1.0 when no false "
                "information was found.",
                primary=True,
            )
        ],
        keywords=["fact-check", "false information", "claims", "hallucination", "agent", "llm-judge"],
        domain="generation",
        required_inputs=["actual_output"],
        compliance=["NIST: Valid and Reliable", "NIST: Safe", "SR 11-7: Outcomes Analysis"],
    )
    golden = golden_pair(
        "The Easy Saver account pays 2% interest per year. Withdrawals are free of charge.",
        "The Easy Saver account pays 5% interest per year. Withdrawals cost 10 dollars each.",
        question="What does the savings account pay?",
        retrieved_context=[
            "The Easy Saver account pays 2% interest per year, paid monthly.",
            "Withdrawals from Easy Saver are free of charge at any time.",
        ],
    )

    passages_per_claim: int = field(
        default=3, metadata={"description": "Passages of the retrieved context shown to the judge for each claim."}
    )

    def __post_init__(self) -> None:
        if self.passages_per_claim < 1:
            raise ValueError(f"fact_check: passages_per_claim must be at least 1, got {self.passages_per_claim}")

    def not_applicable(self, case: CaseContext) -> str | None:
        """Without retrieved documents there is nothing to check against; saying so here lets
        ``--evaluators all`` leave the evaluator out of a lab without retrieval."""
        return None if case.retrieved_context else "no documents to check against (no retrieved context)"

    async def judge(self, case: CaseContext, ask: CaseJudge) -> Scored:
        passages = passages_of(case)
        if not passages:
            raise Unscored(f"test case {case.test_case_key}: no documents to check against (no retrieved context)")
        reply = await ask("fact_check_claims", step="claims", question=case.question, answer=case.actual_output)
        claims = [claim.strip() for claim in reply["claims"] if claim.strip()]
        details: dict[str, Any] = {"claims_rationale": reply["rationale"]}
        if len(claims) > MAX_CLAIMS:
            details["claims_omitted"] = len(claims) - MAX_CLAIMS
            claims = claims[:MAX_CLAIMS]
        checked = await asyncio.gather(
            *(self._check(claim, index, passages, ask) for index, claim in enumerate(claims)), return_exceptions=True
        )
        for outcome in checked:
            if isinstance(outcome, BaseException):
                raise outcome
        results = [outcome for outcome in checked if isinstance(outcome, dict)]
        counts = {verdict: sum(result["verdict"] == verdict for result in results) for verdict in VERDICTS}
        score = 1.0 - counts["refuted"] / len(results) if results else 1.0
        details |= {"claims": results, "verdict_counts": counts}
        if not results:
            details["note"] = "the answer makes no checkable claim"
        return Scored(scores={"fact_check": round(score, 6)}, details=details)

    async def _check(self, claim: str, index: int, passages: list[Passage], ask: CaseJudge) -> dict[str, Any]:
        """One claim's verdict with the passages it rests on; a failed judge call raises ``JudgeFailed``."""
        found = best_passages(claim, passages, self.passages_per_claim)
        if not found:
            reason = "No passage of the retrieved context shares a term with the claim; the judge was not asked."
            return {"claim": claim, "verdict": "not_enough_evidence", "rationale": reason, "passages": []}
        verdict = await ask("fact_check_verdict", step=f"claim {index}", claim=claim, passages=_rendered(found))
        return {"claim": claim, "verdict": verdict["verdict"], "rationale": verdict["rationale"],
                "passages": _shown(found)}  # fmt: skip
