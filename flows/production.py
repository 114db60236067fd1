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

from assay.models.gates import FailOn
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
    evaluators: list[str] | None = None,
    name: str = "production-revalidation",
    out: str | None = None,
    baseline: str | None = None,
    gates: list[str] | None = None,
    fail_on: FailOn | None = "high",
    fail_on_regression: bool = True,
) -> dict[str, Any]:
    """``traces``: the folder (or file) the trace exporter writes to; ``lookback_days``: only requests of the
    last N days (empty: all); ``sample``: how many to evaluate (200, 0.1, 10%; empty: all), stratified by
    ``stratify_by`` with ``seed``; ``mask_pii``: personal data replaced before the lab is stored; ``evaluators``:
    default the offline reference-free ones; ``baseline``: a run id instead of the one approved with ``assay
    baseline approve RUN --name NAME``; ``gates``, ``fail_on``, ``fail_on_regression``: as for re-validation."""
    evaluator_ids = evaluators or list(RUN_DEFAULTS.production_evaluators)
    checked = checked_gates(gates or [], evaluator_ids)
    imported = import_production_traces(name, traces, format, lookback_days, sample, seed, stratify_by, mask_pii)
    print(f"{name}: {imported['cases']} of {imported['traces']} production requests imported: {imported['lab']}")
    summary = evaluate_flow(out=out, lab=imported["lab"], evaluators=evaluator_ids, name=name)
    verdict = judge_against_baseline(name, summary["run_id"], baseline, checked, fail_on, fail_on_regression)
    return concluded(name, summary["run_id"], verdict)
