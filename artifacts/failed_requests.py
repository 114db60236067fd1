"""Failed requests of a run (the host gave an error instead of an answer), counted per model and judged on their
own limit. A failed request is unscored, never a zero, and ``--fail-on`` would count it only as a "high" problem
once more than 5% of a model's requests failed: one failed request in a small sample then failed the whole
re-validation, with a reason about severities. Here the operator sets the limit as a share of the requests, and
the verdict says who set it. Pure: it reads the run's summary.json and results.json."""

from assay.artifacts.report.run_documents import RunDocuments

from assay.escaping import short_line
from assay.models.gates import FailedRequestsGate, FailedRequestsLimit, ModelRequests
from assay.models.workflow import RUN_DEFAULTS

PARAMETER = "max_failed_requests_share"
"""The re-validation flows' parameter that sets the limit."""


def failed_requests_limit(max_share: float | None) -> FailedRequestsLimit:
    """The limit the parameter sets, or the default one when it is empty."""
    if max_share is None:
        return FailedRequestsLimit(max_share=RUN_DEFAULTS.max_failed_requests_share, set_by="default")
    if not 0.0 <= max_share <= 1.0:
        raise ValueError(f"{PARAMETER}: expected a share between 0 and 1 (0.05 is 5%), got {max_share}")
    return FailedRequestsLimit(max_share=max_share, set_by="parameter")


def failed_requests_gate(evaluation: RunDocuments, limit: FailedRequestsLimit) -> FailedRequestsGate:
    """Each model's failed requests (summary.json) against ``limit``; a run that counts no request at all is
    "not evaluable" and breaches, as a gate that cannot be checked does."""
    summary = evaluation.get("summary.json") or {}
    errors = _first_errors(evaluation)
    models = []
    for model in summary.get("models", []):
        failed = int(model.get("host_failures") or 0)
        requests = int(model.get("answered") or 0) + failed
        models.append(ModelRequests(model_key=model["key"], requests=requests, failed=failed,
                                    first_error=errors.get(model["key"])))  # fmt: skip
    counted = [model for model in models if model.requests]
    over = [model for model in counted if model.share > limit.max_share]
    passed = bool(counted) and not over
    return FailedRequestsGate(limit=limit, models=models, passed=passed, reason=_reason(counted, over, limit))


def limit_words(limit: FailedRequestsLimit) -> str:
    """The limit and who set it: "5% (the default)" or "10% (set by max_failed_requests_share)"."""
    who = "the default" if limit.set_by == "default" else f"set by {PARAMETER}"
    return f"{percent(limit.max_share)} ({who})"


def percent(share: float) -> str:
    return f"{share * 100:.3g}%"


def _reason(counted: list[ModelRequests], over: list[ModelRequests], limit: FailedRequestsLimit) -> str:
    if not counted:
        return "not evaluable: the run's summary.json counts no request"
    counts = "; ".join(f"{model.model_key}: {model.failed} of {model.requests} requests failed "
                       f"({percent(model.share)})" for model in counted)  # fmt: skip
    if not over:
        return f"{counts}; within the limit of {limit_words(limit)}"
    errors = "; ".join(f"{model.model_key}'s first error: {short_line(model.first_error, 160)}"
                       for model in over if model.first_error)  # fmt: skip
    return f"{counts}; over the limit of {limit_words(limit)}" + (f" ({errors})" if errors else "")


def _first_errors(evaluation: RunDocuments) -> dict[str, str]:
    """Model key -> the error of its first failed request, from the first evaluator's per-case rows."""
    errors: dict[str, str] = {}
    for _, document in evaluation.results():
        for row in document.get("results", []):
            if row.get("error") and row.get("model_key") not in errors:
                errors[str(row.get("model_key"))] = str(row["error"])
        return errors
    return errors
