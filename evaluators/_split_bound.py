"""The input-size guard of the sentence-based evaluators.

Splitting is linear, but a megabyte answer is still ten thousand sentences to embed or to pair with every
context sentence, which stalls a run for every other case. Such a case is unscored with the reason, kept
out of the batched ``prepare`` and never scored as zero.
"""

from collections.abc import Sequence

from assay.evaluators.base import CaseContext, Unscored

from assay.embeddings.sentences import MAX_SPLIT_CHARS

_LABELS = {
    "question": "question",
    "expected_output": "expected answer",
    "actual_output": "answer",
    "retrieved_context": "retrieved context",
}


def _length(case: CaseContext, name: str) -> int:
    if name == "retrieved_context":
        return sum(len(chunk.text) for chunk in case.retrieved_context)
    return len(getattr(case, name) or "")


def oversized_input(case: CaseContext, inputs: Sequence[str]) -> str | None:
    """Why ``case`` is too large to split (the first of ``inputs`` over ``MAX_SPLIT_CHARS``), else None."""
    for name in inputs:
        length = _length(case, name)
        if length > MAX_SPLIT_CHARS:
            return (
                f"test case {case.test_case_key}: {_LABELS[name]} longer than {MAX_SPLIT_CHARS:,} characters "
                f"({length:,}), too long to split into sentences"
            )
    return None


def within_bound(cases: Sequence[CaseContext], inputs: Sequence[str]) -> list[CaseContext]:
    """The cases a batched ``prepare`` may split: the others are reported by ``check_bound`` in ``score``."""
    return [case for case in cases if oversized_input(case, inputs) is None]


def check_bound(case: CaseContext, inputs: Sequence[str]) -> None:
    """Raise ``Unscored`` for a case whose ``inputs`` are too long to split."""
    reason = oversized_input(case, inputs)
    if reason is not None:
        raise Unscored(reason)
