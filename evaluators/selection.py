"""Which evaluators a run can use: ``--evaluators all`` keeps those whose inputs the test lab provides."""

from collections.abc import Sequence

from assay.models import TestLab
from evaluators.base import CaseContext, Services
from evaluators.registry import build_evaluator, evaluator_ids


def select_evaluators(
    lab: TestLab, requested: Sequence[str], services: Services | None = None
) -> tuple[list[str], dict[str, str]]:
    """Return (evaluator ids to run, {skipped id: reason}).

    ``["all"]`` means every registered evaluator that at least one answered case has the inputs for and
    that is available here (model weights present, judge configured). Explicitly named evaluators always
    run: their unscored cases then carry the reason.
    """
    if list(requested) != ["all"]:
        return list(requested), {}
    contexts = [CaseContext.from_row(row) for row in lab.rows if row.answered]
    selected: list[str] = []
    skipped: dict[str, str] = {}
    for evaluator_id in evaluator_ids():
        evaluator = build_evaluator(evaluator_id, services)
        inputs = evaluator.spec.required_inputs
        if not any(not context.missing(inputs) for context in contexts):
            missing = sorted({name for context in contexts for name in context.missing(inputs)}) or list(inputs)
            skipped[evaluator_id] = f"no answered test case has {', '.join(missing)}"
            continue
        with_inputs = [context for context in contexts if not context.missing(inputs)]
        reasons = [evaluator.not_applicable(context) for context in with_inputs]
        if all(reason is not None for reason in reasons):
            skipped[evaluator_id] = f"applies to no test case ({reasons[0]})"
            continue
        reason = evaluator.unavailable_reason()
        if reason is not None:
            skipped[evaluator_id] = reason
            continue
        selected.append(evaluator_id)
    return selected, skipped
