"""Step alignment and completeness: does the answer give the procedure's steps, all of them, in order (seed 002).

The retrieved context is the ground truth. Steps are extracted from each context chunk and from the answer
by regular expressions, embedded with the run's sentence-embedding model (all-MiniLM-L6-v2 by default, as the
seed prescribes), and aligned by an edit distance in which two steps match when their cosine similarity
reaches ``step_similarity_threshold``. The step counts are reported too: an alignment over two or three
detected steps deserves less trust than one over ten.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from assay.evaluators._sentence_similarity import embed_distinct, similarity_matrix, similarity_spec
from assay.evaluators._split_bound import check_bound, oversized_input, within_bound
from assay.evaluators._steps import MAX_STEPS, TooManyStepsError, align_steps, extract_steps
from assay.evaluators.base import CaseContext, Evaluator, Unscored, golden_pair, quantity_metric
from assay.evaluators.registry import register

from assay.models.evaluation import MetricMeta

SPLIT_INPUTS = ("retrieved_context", "actual_output")
NO_PROCEDURE = (
    "no steps (numbered or bulleted list, 'Step N:' lines, or First/Then/Finally sentences) found in the "
    "retrieved context, so there is no procedure to align"
)


def _step_metric(
    key: str, display_name: str, description: str, *, higher_is_better: bool = False, primary: bool = False
) -> MetricMeta:
    """A count of steps (0 to MAX_STEPS): of alignment errors (lower is better) or of steps found."""
    return quantity_metric(
        key,
        display_name,
        description,
        ceiling=float(MAX_STEPS),
        threshold=0.75,
        higher_is_better=higher_is_better,
        primary=primary,
    )


def _steps_found_metric(key: str, display_name: str, where: str) -> MetricMeta:
    """The number of steps detected in ``where`` (the context or the answer); more steps, more trust."""
    return _step_metric(key, display_name, f"Number of steps detected in {where}.", higher_is_better=True)


_CONTEXT = (
    "To close your account:\n"
    "1. Log in to the Harbourline app and choose the account you want to close.\n"
    "2. Tap Manage account > Close this account.\n"
    "3. Tell us where to send any remaining balance.\n"
    "4. Destroy your debit card by cutting through the chip."
)


@register
@dataclass
class StepAlignment(Evaluator):
    spec = similarity_spec(
        "step_alignment",
        "Step alignment and completeness",
        "Checks the steps of a procedure in the actual answer for alignment and completeness against the "
        "retrieved context as ground truth. Enumerations (numbered or bulleted lists, 'Step N:' lines, "
        "First/Then/Finally sentences) are extracted by regular expressions, the steps are embedded, and "
        "dynamic programming finds the fewest insertions, deletions and mismatches (step pairs below the "
        "similarity threshold) that turn the answer's steps into the context's.",
        [
            _step_metric(
                "edits",
                "Edits",
                "Number of edits (insertions, deletions and mismatches) that turn the answer's sequence of steps "
                "into the retrieved context's.",
                primary=True,
            ),
            _step_metric(
                "insertions", "Insertions", "Steps in the retrieved context that the actual answer leaves out."
            ),
            _step_metric(
                "deletions", "Deletions", "Steps in the actual answer that the retrieved context does not have."
            ),
            _step_metric(
                "mismatches",
                "Mismatches",
                "Aligned pairs of steps that differ in meaning (similarity below the step similarity threshold).",
            ),
            _steps_found_metric("retrieved_context_steps", "Retrieved context steps", "the context"),
            _steps_found_metric("actual_answer_steps", "Actual answer steps", "the actual answer"),
        ],
        keywords=["embeddings", "procedures", "steps", "alignment", "completeness", "rag"],
        required_inputs=["retrieved_context", "actual_output"],
    )

    golden = golden_pair(
        "1. Log in to the Harbourline app and choose the account to close.\n"
        "2. Tap Manage account, then Close this account.\n"
        "3. Tell us where to send the remaining balance.\n"
        "4. Destroy your debit card by cutting through its chip.",
        "- Destroy your debit card by cutting through the chip.\n"
        "- Visit any branch with two forms of identification.\n"
        "- Log in to the Harbourline app and choose the account you want to close.",
        retrieved_context=[_CONTEXT],
    )

    step_similarity_threshold: float = field(
        default=0.6,
        metadata={
            "description": "Cosine similarity at or above which an answer step and a context step count as the "
            "same step; below it an aligned pair is a mismatch."
        },
    )

    def not_applicable(self, case: CaseContext) -> str | None:
        """A case whose retrieved context holds no procedure is no step-alignment case: saying so here (not
        only in ``score``) lets ``--evaluators all`` leave the evaluator out of a lab without procedures.
        Oversized or over-long contexts count as applicable, so ``score`` records their own reason."""
        if oversized_input(case, ("retrieved_context",)) is not None:
            return None
        try:
            has_steps = any(extract_steps(chunk.text) for chunk in case.retrieved_context)
        except TooManyStepsError:
            return None
        return None if has_steps else NO_PROCEDURE

    def prepare(self, cases: Sequence[CaseContext]) -> None:
        texts: list[str] = []
        for case in within_bound(cases, SPLIT_INPUTS):
            try:
                texts.extend(self._reference_steps(case))
                texts.extend(extract_steps(case.actual_output or ""))
            except TooManyStepsError:
                continue  # score() reports the case as unscored
        embed_distinct(self.services.embedder, texts)

    def _reference_steps(self, case: CaseContext) -> list[str]:
        steps = [step for chunk in case.retrieved_context for step in extract_steps(chunk.text)]
        if len(steps) > MAX_STEPS:
            raise TooManyStepsError(f"{len(steps)} steps found, more than the {MAX_STEPS} a procedure may have")
        return steps

    def score(self, case: CaseContext) -> dict[str, float | None]:
        check_bound(case, SPLIT_INPUTS)
        try:
            reference = self._reference_steps(case)
        except TooManyStepsError as error:
            raise Unscored(f"test case {case.test_case_key}: retrieved context: {error}") from error
        try:
            answer = extract_steps(case.actual_output or "")
        except TooManyStepsError as error:
            raise Unscored(f"test case {case.test_case_key}: actual answer: {error}") from error
        counts = {"retrieved_context_steps": float(len(reference)), "actual_answer_steps": float(len(answer))}
        if not reference:
            raise Unscored(f"test case {case.test_case_key}: {NO_PROCEDURE}", scores=counts)
        similarity = (
            similarity_matrix(self.services.embedder, reference, answer) if answer else np.zeros((len(reference), 0))
        )
        alignment = align_steps(similarity, self.step_similarity_threshold)
        return {
            "edits": float(alignment.edits),
            "insertions": float(alignment.insertions),
            "deletions": float(alignment.deletions),
            "mismatches": float(alignment.mismatches),
            **counts,
        }
