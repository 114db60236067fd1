"""Answer relevancy (sentence similarity): does some sentence of the answer address the question (seed 002).

The best sentence is what counts: a relevant answer may carry caveats and pleasantries that resemble the
question less, so the maximum over sentences, not the mean, says whether the question was addressed. No LLM is
needed, unlike the question-regeneration variant of answer relevancy.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from assay.evaluators._sentence_similarity import SentenceSimilarityEvaluator, sentences_of, similarity_spec
from assay.evaluators.answer_relevancy_llm import answer_relevancy_golden
from assay.evaluators.base import CaseContext, score_metric
from assay.evaluators.registry import register


@register
@dataclass
class AnswerRelevancySentenceSimilarity(SentenceSimilarityEvaluator):
    spec = similarity_spec(
        "answer_relevancy_sentence_similarity",
        "Answer relevancy (sentence similarity)",
        "How relevant the actual answer is to the question: the question and every sentence of the actual "
        "answer are embedded, and the score is the highest cosine similarity between the question and an "
        "answer sentence.",
        [
            score_metric(
                "answer_relevancy",
                "Answer relevancy",
                "Maximum cosine similarity between the question and a sentence of the actual answer: whether "
                "the answer says something relevant to what was asked.",
                primary=True,
            )
        ],
        keywords=["embeddings", "relevancy", "question", "sentences"],
        required_inputs=["question", "actual_output"],
    )

    golden = answer_relevancy_golden(
        "The Easy Access Saver pays an interest rate of 3.25% AER. You can open it in the app."
    )

    split_inputs = ("actual_output",)

    @staticmethod
    def texts(case: CaseContext) -> Iterable[str]:
        return (case.question, *sentences_of(case.actual_output or ""))

    def similarities(self, case: CaseContext) -> dict[str, float]:
        answer = sentences_of(case.actual_output or "")
        similarities = self.cosines([case.question], answer)
        return {"answer_relevancy": similarities.max()}
