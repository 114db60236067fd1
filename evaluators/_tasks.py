"""Which task a test case declares, for evaluators that only make sense on one (``EvaluatorSpec.tasks``).

A summarization metric on a bank question-and-answer case, or a translation metric on anything but a
translation, measures nothing the case asks for. A case declares its task in its categories, under any of
the spellings below (case, hyphens, underscores and spaces do not matter).
"""

from collections.abc import Sequence

from assay.models.evaluation import Task

TASK_CATEGORIES: dict[Task, frozenset[str]] = {
    "summarization": frozenset({"summarization", "summarisation", "summary", "summarize", "summarise"}),
    "translation": frozenset({"translation", "machine translation", "translate"}),
}


def _folded(category: str) -> str:
    return " ".join(category.casefold().replace("-", " ").replace("_", " ").split())


def declared_tasks(categories: Sequence[str]) -> set[Task]:
    """The tasks ``categories`` declare."""
    folded = {_folded(category) for category in categories}
    return {task for task, names in TASK_CATEGORIES.items() if folded & names}


def task_mismatch(tasks: Sequence[Task], categories: Sequence[str]) -> str | None:
    """Why a case with ``categories`` is outside an evaluator made for ``tasks``; None when it is inside (or
    the evaluator is made for any task)."""
    if not tasks or declared_tasks(categories) & set(tasks):
        return None
    wanted = " or ".join(tasks)
    spellings = ", ".join(sorted(name for task in tasks for name in TASK_CATEGORIES[task]))
    return f"the test case does not declare the {wanted} task (a category such as {spellings})"
