"""Question Answering (GPTScore): how likely the judge model finds "Answer: Yes" to eight questions about
the conversation (is the AI's response interesting, engaging, understandable...), seed 002."""

from dataclasses import dataclass, field

from assay.evaluators._gptscore import THRESHOLD_PARAMETER, Aspect, GPTScoreEvaluator, Prompt, gptscore_metrics
from assay.evaluators.base import CaseContext
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec

ASPECTS = (
    Aspect("interest", "Interest", "Is the generated text interesting?"),
    Aspect("engagement", "Engagement", "Is the generated text engaging?"),
    Aspect("understandability", "Understandability", "Is the generated text understandable?"),
    Aspect("relevance", "Relevance", "How well is the generated text relevant to its source text?"),
    Aspect("specific", "Specific", "Is the generated text generic or specific to the source text?"),
    Aspect(
        "correctness",
        "Correctness",
        "Is the generated text correct or was there a misunderstanding of the source text?",
    ),
    Aspect("semantically_appropriate", "Semantically Appropriate", "Is the generated text semantically appropriate?"),
    Aspect("fluency", "Fluency", "Is the generated text well-written and grammatical?"),
)


def conversation(case: CaseContext) -> str:
    """The manual's ``{history}``: the earlier turns, if any, then the question and the actual answer."""
    speakers = {"user": "Human", "assistant": "AI"}
    lines = [f"{speakers[turn.role]}: {turn.content.strip()}" for turn in case.turns if turn.role in speakers]
    lines += [f"Human: {case.question.strip()}", f"AI: {(case.actual_output or '').strip()}"]
    return "\n".join(lines)


@register
@dataclass
class GPTScoreQuestionAnswering(GPTScoreEvaluator):
    spec = EvaluatorSpec(
        id="gptscore_question_answering",
        display_name="Question Answering (GPTScore)",
        description=(
            "GPTScore for question answering: the average negative log-likelihood the judge model gives "
            "'Answer: Yes' after asking whether the AI's response in the conversation (question and actual "
            "answer) is interesting, engaging, understandable, relevant, specific, correct, semantically "
            "appropriate and fluent. Needs a judge endpoint with prompt log-probabilities. Lower is better."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["question", "actual_output"],
        needs=["llm"],
        metrics=gptscore_metrics(ASPECTS),
        keywords=["gptscore", "question answering", "dialogue", "log-likelihood", "llm-judge"],
    )
    golden = {
        "good": {
            "question": "What is the daily ATM withdrawal limit?",
            "actual_output": "The daily ATM withdrawal limit is 500 dollars.",
        },
        "bad": {
            "question": "What is the daily ATM withdrawal limit?",
            "actual_output": "Bananas are yellow.",
        },
    }
    family = "qa"
    aspects = ASPECTS
    metric_threshold: float | None = field(
        default=None,
        metadata={"description": THRESHOLD_PARAMETER},
    )

    def prompts(self, case: CaseContext) -> list[Prompt]:
        return [Prompt("conversation", {"history": conversation(case)}, None)]
