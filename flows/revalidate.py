"""Scheduled re-validation: evaluate the production hosts on a fixed suite, each run in its own folder, judge
the run against the approved baseline and fail it (so a Prefect automation can notify) when a gate is
breached, a metric regressed, or nothing could be compared with the baseline (never a vacuous pass)."""

from typing import Any

from assay.flows.evaluate import evaluate_flow
from assay.tasks.revalidate import checked_gates, judge_against_baseline
from prefect import flow

from assay.models.evaluation import DEFAULT_EVALUATORS
from assay.models.gates import FailedRequestsShare, FailOn
from assay.models.plugins import EvaluatorId
from assay.models.workflow import RUN_DEFAULTS


class RevalidationFailed(RuntimeError):
    """Raised to end the flow run Failed; the message lists every reason."""


class RevalidationNotComparable(RevalidationFailed):
    """Failed too, but named apart: no test case was scored in both the run and its baseline on any metric."""


@flow(name="revalidation", log_prints=True, persist_result=False)
def revalidation_flow(
    suite: str,
    hosts: list[str | dict[str, Any]] | None = None,
    evaluators: list[EvaluatorId] | None = None,
    name: str = RUN_DEFAULTS.revalidation_name,
    out: str | None = None,
    baseline: str | None = None,
    gates: list[str] | None = None,
    fail_on: FailOn | None = "high",
    max_failed_requests_share: FailedRequestsShare | None = None,
    fail_on_regression: bool = True,
) -> dict[str, Any]:
    """Re-validate hosts on a fixed suite against the approved baseline: the run fails, so that a Prefect
    automation can notify, when a gate is breached, a metric regresses significantly, or nothing could be compared
    with the baseline. A run with nothing comparable to its baseline (no test case scored in both on any metric)
    ends Failed, verdict "not comparable".

    Args:
        suite: The test suite file to ask the hosts (its format detected from the content), the same every run so
            that runs compare.
        hosts: The hosts to ask: host types (sample-rag), host files (.json or .toml) or host configurations as
            objects; empty: sample-rag.
        evaluators: Evaluator ids to score the answers with; empty: answer_semantic_similarity and text_matching
            (offline, fast, and meaningful on any suite).
        name: The re-validation's name: its baseline is the run approved under this name (assay baseline approve
            RUN --name NAME --by YOUR_NAME), and its results are stored under evaluations/<name>/.
        out: The run's export folder, {run_id} filled in (default <assay home>/exports/<run id>).
        baseline: A run id to compare with instead of the one approved with assay baseline approve; empty: the
            approved one. With no baseline approved yet nothing is compared (verdict "no baseline"); gates,
            fail_on and max_failed_requests_share still apply.
        gates: Expressions such as groundedness>=0.8 (pass rate per model), each METRIC>=X, <=, > or <: METRIC an
            evaluator id (its primary metric), evaluator_id.metric_key or a metric key, X a number or a percentage
            (80%). A gate naming no metric of the chosen evaluators fails the run before any host is asked; a
            breached gate fails the run.
        fail_on: Fail on problems of that severity or worse: high, medium or any (low too); empty: never. Failed
            requests aside: max_failed_requests_share judges them.
        max_failed_requests_share: Fail when more than this share of a model's requests failed (the host gave an
            error instead of an answer), from 0 to 1 (0.05 is 5%); empty: the default, 0.05, so one failed request
            in 200 passes.
        fail_on_regression: Fail when a metric is significantly worse than in the baseline (its 95% bootstrap
            interval entirely on the worse side of zero) or a case newly fails; off, the comparison is still
            published but a regression does not fail the run (nothing comparable still does).
    """
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
