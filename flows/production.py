"""Production re-validation: what the production RAG actually answered, re-validated on a schedule. A sample of
the newest traces is imported as a lab (masked, with its import report), scored by reference-free evaluators
(production requests have no expected answer), compared with the approved baseline sample as independent
samples, and the run fails, so that an automation can notify, on a gate, a significant regression, or
nothing comparable."""

from typing import Any, Literal

from assay.flows.evaluate import evaluate_flow
from assay.flows.revalidate import concluded
from assay.tasks.revalidate import checked_gates, judge_against_baseline
from assay.tasks.traces import import_production_traces
from prefect import flow

from assay.models.gates import FailedRequestsShare, FailOn
from assay.models.plugins import EvaluatorId
from assay.models.workflow import RUN_DEFAULTS


@flow(name="production-revalidation", log_prints=True, persist_result=False)
def production_revalidation_flow(
    traces: str,
    format: Literal["otlp-json", "openinference", "mlflow"] = "otlp-json",
    lookback_days: float | None = RUN_DEFAULTS.production_lookback_days,
    sample: str | None = RUN_DEFAULTS.production_sample,
    seed: int = RUN_DEFAULTS.seed,
    stratify_by: Literal["route", "model", "service", "none"] = "route",
    mask_pii: bool = True,
    evaluators: list[EvaluatorId] | None = None,
    name: str = "production-revalidation",
    out: str | None = None,
    baseline: str | None = None,
    gates: list[str] | None = None,
    fail_on: FailOn | None = "high",
    max_failed_requests_share: FailedRequestsShare | None = None,
    fail_on_regression: bool = True,
) -> dict[str, Any]:
    """Re-validate the production RAG from its exported traces against the approved baseline.

    Args:
        traces: The folder (or file, or s3:// URL) the trace exporter writes to.
        format: The trace format: otlp-json (the OpenTelemetry Collector's file exporter), openinference or mlflow.
        lookback_days: Only the requests of the last N days; empty for every request in the files.
        sample: How many requests to evaluate: a count (200), a fraction (0.1) or a percentage (10%); empty for all.
        seed: The seed of the sample: the same traces and seed give the same sample.
        stratify_by: Keep each route's (or model's, or service's) share of the requests in the sample; none for a
            plain random sample.
        mask_pii: Replace personal data with placeholders before the lab is stored (credentials are always masked).
        evaluators: Evaluator ids to score the requests with; empty for the offline reference-free defaults.
        name: The re-validation's name: its baseline is the run approved under this name.
        out: The export folder; {run_id} in it becomes the run id (default: <assay home>/exports/<run id>).
        baseline: A run id to compare with instead of the baseline approved under this name.
        gates: Gate expressions such as groundedness>=0.8 (a pass rate per model); a breached gate fails the run.
        fail_on: Fail the run on a problem of this severity or worse (high, medium or any); empty: never. Failed
            requests are not counted here: max_failed_requests_share judges them.
        max_failed_requests_share: Fail the run when more than this share of a model's requests failed (the host
            gave an error instead of an answer), from 0 to 1 (0.05 is 5%); empty: the default, 0.05, so one failed
            request in 200 passes. The verdict counts the failed requests and says who set the limit.
        fail_on_regression: Fail the run when a metric is significantly worse than in the baseline or a case newly
            fails.
    """
    evaluator_ids = evaluators or list(RUN_DEFAULTS.production_evaluators)
    checked = checked_gates(gates or [], evaluator_ids)
    imported = import_production_traces(name, traces, format, lookback_days, sample, seed, stratify_by, mask_pii)
    print(f"{name}: {imported['cases']} of {imported['traces']} production requests imported: {imported['lab']}")
    summary = evaluate_flow(out=out, lab=imported["lab"], evaluators=evaluator_ids, name=name)
    verdict = judge_against_baseline(name, summary["run_id"], baseline, checked, fail_on, fail_on_regression,
                                     max_failed_requests_share)  # fmt: skip
    return concluded(name, summary["run_id"], verdict)
