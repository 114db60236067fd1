"""Scheduled re-validation: evaluate the production hosts on a fixed suite, each run in its own folder, judge
the run against the approved baseline and fail it (so a Prefect automation can notify) when a gate is
breached, a metric regressed, or nothing could be compared with the baseline (never a vacuous pass)."""

from typing import Any

from assay.flows.evaluate import evaluate_flow
from assay.tasks.revalidate import checked_gates, judge_against_baseline
from prefect import flow

from assay.models.evaluation import DEFAULT_EVALUATORS
from assay.models.gates import FailedRequestsShare, FailOn


class RevalidationFailed(RuntimeError):
    """Raised to end the flow run Failed; the message lists every reason."""


class RevalidationNotComparable(RevalidationFailed):
    """Failed too, but named apart: no test case was scored in both the run and its baseline on any metric."""


@flow(name="revalidation", log_prints=True, persist_result=False)
def revalidation_flow(
    suite: str,
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[str] | None = None,
    name: str = "revalidation",
    out: str | None = None,
    baseline: str | None = None,
    gates: list[str] | None = None,
    fail_on: FailOn | None = "high",
    max_failed_requests_share: FailedRequestsShare | None = None,
    fail_on_regression: bool = True,
) -> dict[str, Any]:
    """``out``: the run's export folder, ``{run_id}`` filled in (default ``<assay home>/exports/<run id>``);
    ``baseline``: a run id to compare with instead of the one approved with ``assay baseline approve``;
    ``gates``: expressions such as ``groundedness>=0.8`` (pass rate per model); ``fail_on``: fail on problems
    of that severity or worse, failed requests aside; ``max_failed_requests_share``: fail when more than this
    share of a model's requests failed (empty: the default, 0.05); ``fail_on_regression``: fail when a metric
    is significantly worse than in the baseline (95% bootstrap interval below zero) or a case newly fails. A run
    with nothing comparable to its baseline (no test case scored in both on any metric) ends Failed, verdict
    "not comparable"."""
    evaluator_ids = evaluators or list(DEFAULT_EVALUATORS)
    checked = checked_gates(gates or [], evaluator_ids)
    summary = evaluate_flow(out=out, suite=suite, hosts=hosts, evaluators=evaluator_ids, name=name)
    verdict = judge_against_baseline(name, summary["run_id"], baseline, checked, fail_on, fail_on_regression,
                                     max_failed_requests_share)  # fmt: skip
    return concluded(name, summary["run_id"], verdict)


def concluded(name: str, run_id: str, verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict, or the flow run ended Failed with every reason when the re-validation failed; the log
    line counts the failed requests either way."""
    baseline_text = verdict["baseline"]["run_id"] if verdict["baseline"] else "none"
    requests = verdict["gates"].get("failed_requests")
    counted = f"; failed requests: {requests['reason']}" if requests else ""
    print(f"re-validation {name}: run {run_id}, baseline {baseline_text}, verdict {verdict['verdict']}{counted}")
    if verdict["verdict"] == "not comparable":
        raise RevalidationNotComparable("; ".join(verdict["reasons"]))
    if verdict["breached"]:
        raise RevalidationFailed("; ".join(verdict["reasons"]))
    return verdict
