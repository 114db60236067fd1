"""Which evaluators a run can use: ``--evaluators all`` keeps those whose inputs the test lab provides;
``recommended`` (an MRM run's default) keeps, of those, the ones whose verdicts mean something on any suite."""

from collections.abc import Sequence
from typing import Any

from assay.evaluators.base import CaseContext, Evaluator, Services
from assay.evaluators.registry import build_evaluator, evaluator_ids

from assay.models import TestLab

# Parameters ``--evaluators all`` runs an evaluator with, below the user's own. An evaluator chosen by name
# does what its manual entry says for every case (json_schema checks parseability where a case has no
# schema); run for every evaluator at once, it keeps to the cases it is meant for.
ALL_SELECTION_PARAMETERS: dict[str, dict[str, Any]] = {"json_schema": {"check_cases_without_schema": False}}

RECOMMENDED = (
    "groundedness",
    "context_relevancy_soft",
    "answer_semantic_similarity",
    "answer_relevancy_sentence_similarity",
    "document_recall",
    "assertions",
    "text_matching",
    "json_schema",
    "pii_leakage",
    "sensitive_data_leakage",
    "toxicity",
    "encoding_guardrail",
    "looping_detection",
)
"""``recommended``: offline checks chosen by what the suite has: retrieved contexts -> groundedness and context
relevancy; expected answers -> semantic answer similarity; questions -> answer relevancy; expected document
ids -> retrieval recall; the suite's own assertions, output conditions and schemas; always the leakage and
safety checks. Reference n-gram and edit metrics (BLEU, ROUGE, step alignment) run only when named: against
generated expected answers they fail nearly every answer and crowd out what matters."""
SELECTION_KEYWORDS = ("all", "recommended")


def selection_keyword(requested: Sequence[str]) -> str | None:
    """``all`` or ``recommended`` when that is the whole request, else None (evaluators named one by one)."""
    return requested[0] if len(requested) == 1 and requested[0] in SELECTION_KEYWORDS else None


def parameters_under_all(evaluator_id: str, user_parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """The parameters to build ``evaluator_id`` with when the run asked for ``all``: the selection's defaults
    (``ALL_SELECTION_PARAMETERS``) overridden by what the user set."""
    return ALL_SELECTION_PARAMETERS.get(evaluator_id, {}) | (user_parameters or {})


def run_parameters(
    requested: Sequence[str], evaluator_id: str, user_parameters: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The parameters ``evaluator_id`` runs with: under ``all`` the selection's defaults apply (a JSON check
    only where JSON is expected), when named explicitly only what the user set."""
    if selection_keyword(requested):
        return parameters_under_all(evaluator_id, user_parameters)
    return dict(user_parameters or {})


def select_evaluators(
    lab: TestLab, requested: Sequence[str], services: Services | None = None
) -> tuple[list[str], dict[str, str]]:
    """Return (evaluator ids to run, {skipped id: reason}).

    ``["all"]`` means every registered evaluator that at least one answered case has the inputs for and
    that is available here (model weights present, judge configured), judged with the parameters of
    ``parameters_under_all``; ``["recommended"]`` the same among ``RECOMMENDED``. Explicitly named evaluators
    always run: their unscored cases then carry the reason.
    """
    keyword = selection_keyword(list(requested))
    if keyword is None:
        return list(requested), {}
    candidates = evaluator_ids() if keyword == "all" else [e for e in evaluator_ids() if e in RECOMMENDED]
    answered = [row for row in lab.rows if row.answered]
    plain = [CaseContext.from_row(row) for row in answered]  # for every evaluator that adds nothing to a case
    selected: list[str] = []
    skipped: dict[str, str] = {}
    for evaluator_id in candidates:
        try:
            evaluator = build_evaluator(evaluator_id, services, **parameters_under_all(evaluator_id))
            adds = type(evaluator).context_for is not Evaluator.context_for
            reason = _skip_reason(evaluator, [evaluator.context_for(row) for row in answered] if adds else plain)
        except Exception as error:  # a broken plugin is reported as skipped, it never aborts the selection
            reason = f"evaluator error: {type(error).__name__}: {error}"
        if reason is None:
            selected.append(evaluator_id)
        else:
            skipped[evaluator_id] = reason
    return selected, skipped


def _skip_reason(evaluator: Evaluator, contexts: Sequence[CaseContext]) -> str | None:
    """Why ``--evaluators all`` leaves the evaluator out (no case has its inputs, it applies to none, it is
    unavailable here), or None to run it."""
    inputs = evaluator.spec.required_inputs
    with_inputs = [context for context in contexts if not context.missing(inputs)]
    if not with_inputs:
        missing = sorted({name for context in contexts for name in context.missing(inputs)}) or list(inputs)
        return f"no answered test case has {', '.join(missing)}"
    reasons = [_not_applicable(evaluator, context) for context in with_inputs]
    if all(reason is not None for reason in reasons):
        return f"applies to no test case ({reasons[0]})"
    return evaluator.unavailable_reason()


def _not_applicable(evaluator: Evaluator, context: CaseContext) -> str | None:
    """``evaluator.inapplicable_reason`` that never aborts the selection: a case it raises on counts as one
    the evaluator applies to, so the run records the error on that case instead of hiding the evaluator."""
    try:
        return evaluator.inapplicable_reason(context)
    except Exception:  # recorded per case by the runner, which calls it under its own guard
        return None
