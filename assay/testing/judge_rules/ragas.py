"""Rules for the Ragas-style judges (``ragas_*`` templates): claims are sentences, support is word coverage
with every figure present, usefulness and relevance are word overlap with the question or expected answer."""

import re

from assay.testing.judge_rules import Verdict, content_words, coverage, numbered, rule, sentences, words

SUPPORTED = 0.75
"""Share of a claim's content words the evidence must contain (with every figure) to count as stated."""
_NONCOMMITTAL = re.compile(r"\b(i don't know|i do not know|not sure|cannot say|can't say|unable to)\b", re.IGNORECASE)
_FIGURE = re.compile(r"\d")


def _states(claim: str, evidence: str) -> bool:
    """Whether ``evidence`` states ``claim``: most content words and every figure token of the claim."""
    figures = {word for word in words(claim) if _FIGURE.search(word)}
    return coverage(claim, evidence) >= SUPPORTED and figures <= set(words(evidence))


def _claims(text: str) -> list[str]:
    """Sentences (and ``;``-separated parts) that assert something: at least one content word."""
    parts = (part.strip() for sentence in sentences(text) for part in sentence.split("; "))
    return [part for part in parts if content_words(part)]


@rule("ragas_claims")
def claims(inputs: dict[str, str]) -> Verdict:
    found = _claims(inputs.get("answer", ""))
    return {"rationale": f"One claim per sentence: {len(found)} claims.", "claims": found}


@rule("ragas_claim_verification")
def claim_verification(inputs: dict[str, str]) -> Verdict:
    context = inputs.get("context", "")
    verdicts = []
    for number, claim in enumerate(numbered(inputs.get("claims", "")), start=1):
        supported = _states(claim, context)
        reason = "The context states it." if supported else "The context does not state it."
        verdicts.append({"claim": number, "supported": supported, "reason": reason})
    return {"rationale": "Each claim checked for its words and figures in the context.", "verdicts": verdicts}


@rule("ragas_statement_overlap")
def statement_overlap(inputs: dict[str, str]) -> Verdict:
    answer, expected = inputs.get("answer", ""), inputs.get("expected", "")
    return {
        "rationale": "Statements matched by their words and figures.",
        "answer_statements": [
            {"statement": statement, "in_expected": _states(statement, expected)} for statement in _claims(answer)
        ],
        "expected_statements": [
            {"statement": statement, "in_answer": _states(statement, answer)} for statement in _claims(expected)
        ],
    }


@rule("ragas_question_generation")
def question_generation(inputs: dict[str, str]) -> Verdict:
    answer = inputs.get("answer", "")
    count = int(inputs.get("count", "3") or 3)
    if _NONCOMMITTAL.search(answer):
        return {"rationale": "The answer avoids answering.", "questions": ["What is the answer?"], "noncommittal": True}
    topics = [" ".join(words(sentence)) for sentence in sentences(answer)] or ["this"]
    openings = ("What about", "Can you tell me about", "Which")
    questions = [f"{openings[index % len(openings)]} {topics[index % len(topics)]}?" for index in range(count)]
    return {"rationale": "Questions built from the answer's sentences.", "questions": questions, "noncommittal": False}


@rule("ragas_chunk_usefulness")
def chunk_usefulness(inputs: dict[str, str]) -> Verdict:
    useful = coverage(inputs.get("expected", ""), inputs.get("chunk", "")) >= 0.5
    return {
        "rationale": "Shares the expected answer's facts." if useful else "Lacks the expected facts.",
        "useful": useful,
    }


@rule("ragas_statement_attribution")
def statement_attribution(inputs: dict[str, str]) -> Verdict:
    context = inputs.get("context", "")
    statements = [
        {"statement": statement, "attributed": _states(statement, context)}
        for statement in _claims(inputs.get("expected", ""))
    ]
    return {"rationale": "Statements looked up in the context.", "statements": statements}


@rule("ragas_relevant_sentences")
def relevant_sentences(inputs: dict[str, str]) -> Verdict:
    question = content_words(inputs.get("question", ""))
    relevant = [
        number
        for number, sentence in enumerate(numbered(inputs.get("sentences", "")), start=1)
        if len(question & content_words(sentence)) >= max(2, len(question) // 2)
    ]
    return {"rationale": "Sentences sharing the question's key words.", "relevant": relevant}
