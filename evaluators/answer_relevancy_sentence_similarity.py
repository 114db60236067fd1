"""Answer relevancy (sentence similarity): does some sentence of the answer address the question (seed 002).

The best sentence is what counts: a relevant answer may carry caveats and pleasantries that resemble the
question less, so the maximum over sentences, not the mean, says whether the question was addressed. No LLM is
needed, unlike the question-regeneration variant of answer relevancy.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from assay.evaluators._sentence_similarity import embed_distinct, rounded, sentences_of, similarity_matrix
from assay.evaluators._split_bound import check_bound, within_bound
from assay.evaluators.base import CaseContext, Evaluator
from assay.evaluators.registry import register

from assay.models.evaluation import EvaluatorSpec, MetricMeta

SPLIT_INPUTS = ("actual_output",)


@register
@dataclass
class AnswerRelevancySentenceSimilarity(Evaluator):
    spec = EvaluatorSpec(
        id="answer_relevancy_sentence_similarity",
        display_name="Answer relevancy (sentence similarity)",
        description=(
            "How relevant the actual answer is to the question: the question and every sentence of the actual "
            "answer are embedded, and the score is the highest cosine similarity between the question and an "
            "answer sentence."
        ),
        domain="generation",
        compliance=["NIST: Valid and Reliable", "SR 11-7: Outcomes Analysis"],
        required_inputs=["question", "actual_output"],
        needs=["embeddings"],
        metrics=[
            MetricMeta(
                key="answer_relevancy",
                display_name="Answer relevancy",
                description=(
                    "Maximum cosine similarity between the question and a sentence of the actual answer: whether "
                    "the answer says something relevant to what was asked."
                ),
                higher_is_better=True,
                threshold=0.75,
                is_primary=True,
            )
        ],
        keywords=["embeddings", "relevancy", "question", "sentences"],
    )

    golden = {
        "good": {
            "question": "What interest rate does the Easy Access Saver pay?",
            "actual_output": "The Easy Access Saver pays an interest rate of 3.25% AER. You can open it in the app.",
        },
        "bad": {
            "question": "What interest rate does the Easy Access Saver pay?",
            "actual_output": "Our branches open at 9am on Saturdays. Parking is free for customers.",
        },
    }

    metric_threshold: float | None = field(
        default=None, metadata={"description": "Overrides the default threshold of the primary metric."}
    )

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        cases = within_bound(cases, SPLIT_INPUTS)
        embed_distinct(
            self.services.embedder,
            (text for case in cases for text in (case.question, *sentences_of(case.actual_output or ""))),
        )

    def score(self, case: CaseContext) -> dict[str, float | None]:
        check_bound(case, SPLIT_INPUTS)
        answer = sentences_of(case.actual_output or "")
        similarities = similarity_matrix(self.services.embedder, [case.question], answer)
        return {"answer_relevancy": rounded(similarities.max())}
