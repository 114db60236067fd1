"""Question Answering (GPTScore): how likely the judge model finds "Answer: Yes" to eight questions about
the conversation (is the AI's response interesting, engaging, understandable...), seed 002."""

from dataclasses import dataclass

from assay.evaluators._gptscore import FLUENCY, RELEVANCE, Aspect, GPTScoreEvaluator, Prompt, gptscore_spec
from assay.evaluators.base import CaseContext, golden_pair
from assay.evaluators.registry import register

ASPECTS = (
    Aspect("interest", "Interest", "Is the generated text interesting?"),
    Aspect("engagement", "Engagement", "Is the generated text engaging?"),
    Aspect("understandability", "Understandability", "Is the generated text understandable?"),
    RELEVANCE,
    Aspect("specific", "Specific", "Is the generated text generic or specific to the source text?"),
    Aspect(
        "correctness",
        "Correctness",
        "Is the generated text correct or was there a misunderstanding of the source text?",
    ),
    Aspect("semantically_appropriate", "Semantically Appropriate", "Is the generated text semantically appropriate?"),
    FLUENCY,
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
    spec = gptscore_spec(
        "gptscore_question_answering",
        "Question Answering (GPTScore)",
        "GPTScore for question answering: the average negative log-likelihood the judge model gives "
        "'Answer: Yes' after asking whether the AI's response in the conversation (question and actual "
        "answer) is interesting, engaging, understandable, relevant, specific, correct, semantically "
        "appropriate and fluent. Needs a judge endpoint with prompt log-probabilities. Lower is better.",
        domain="generation",
        required_inputs=["question", "actual_output"],
        aspects=ASPECTS,
        keywords=["gptscore", "question answering", "dialogue", "log-likelihood", "llm-judge"],
    )
    golden = golden_pair(
        "The daily ATM withdrawal limit is 500 dollars.",
        "Bananas are yellow.",
        question="What is the daily ATM withdrawal limit?",
    )
    family = "qa"
    aspects = ASPECTS

    def prompts(self, case: CaseContext) -> list[Prompt]:
        return [Prompt("conversation", {"history": conversation(case)}, None)]
