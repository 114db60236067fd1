"""Mentions question terms: does the answer talk about what the question asked about?

A cheap, deterministic relevance signal: the share of the question's content words (words of at least
``min_term_length`` letters that are not stop words, compared in lower case) that the answer mentions. An
answer that mentions none of "replacement", "card", "fee" when asked about the replacement card fee is very
likely off topic; one that mentions them all may still be wrong, which other evaluators judge.
"""

import re
from dataclasses import dataclass, field

from assay.evaluators import CaseContext, Evaluator, Unscored

from assay.models.evaluation import EvaluatorSpec, MetricMeta

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
STOP_WORDS = frozenset(
    {"about", "and", "are", "can", "could", "did", "does", "for", "from", "has", "have", "how", "not", "should",
     "that", "the", "their", "there", "this", "was", "what", "when", "where", "which", "who", "why", "will",
     "with", "would", "you", "your"}
)  # fmt: skip
"""Question words and other words too common to say what a question is about."""


def content_terms(text: str, min_length: int) -> set[str]:
    """The distinct words of ``text`` in lower case, stop words and words shorter than ``min_length`` left out."""
    words = (word.lower() for word in _WORD.findall(text))
    return {word for word in words if len(word) >= min_length and word not in STOP_WORDS}


@dataclass
class MentionsQuestionTerms(Evaluator):
    min_term_length: int = field(
        default=3, metadata={"description": "Shortest word (in letters) that counts as a content term."}
    )

    spec = EvaluatorSpec(
        id="mentions_question_terms",
        display_name="Mentions question terms",
        description=(
            "Share of the question's content words (stop words and short words left out) that the actual answer "
            "mentions. A low share flags answers that talk about something else. Deterministic; needs no model."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["question", "actual_output"],
        metrics=[
            MetricMeta(
                key="question_term_coverage",
                display_name="Question term coverage",
                description="Content words of the question found in the answer, over all its content words.",
                higher_is_better=True,
                threshold=0.5,
                range=(0.0, 1.0),
                is_primary=True,
            )
        ],
        keywords=["relevance", "lexical", "example-plugin"],
    )

    golden = {
        "good": {
            "question": "What is the fee for a replacement debit card?",
            "actual_output": "A replacement debit card costs a fee of £5, charged when the card is sent.",
        },
        "bad": {
            "question": "What is the fee for a replacement debit card?",
            "actual_output": "Our branches open at nine in the morning on weekdays.",
        },
    }

    def score(self, case: CaseContext) -> dict[str, float | None]:
        asked = content_terms(case.question, self.min_term_length)
        if not asked:
            raise Unscored(f"test case {case.test_case_key}: the question has no content words to look for")
        answered = content_terms(case.actual_output or "", self.min_term_length)
        return {"question_term_coverage": len(asked & answered) / len(asked)}
