"""A re-validation run judged against its approved baseline: gates on the run itself, the comparison with
the baseline, and the verdict that fails the run when either finds something. A comparison in which no test
case was scored in both runs is "not comparable", never "pass": it fails the run too, with its reason. Pure:
the documents to publish and the Markdown for the Prefect run are returned, nothing is written here."""

from collections.abc import Sequence
from typing import Any

from assay.artifacts.comparison import compare_runs
from assay.artifacts.comparison_report import comparison_html, comparison_markdown, significant
from assay.artifacts.gates import check_gates
from assay.artifacts.report.run_documents import RunDocuments
from assay.artifacts.revalidation_markdown import verdict_markdown

from assay.models.comparison import Comparison, MetricDelta
from assay.models.gates import FailedRequestsLimit, FailOn, Gate
from assay.models.revalidation import BaselineApproval, RevalidationVerdict, Verdict

FOLDER = "revalidation"
"""Where a re-validation's own documents go, inside the run's export folder."""


def assess(
    name: str,
    current: RunDocuments,
    *,
    baseline: tuple[BaselineApproval, RunDocuments] | None,
    gates: Sequence[Gate],
    fail_on: FailOn | None,
    fail_on_regression: bool,
    baseline_note: str = "",
    failed_requests: FailedRequestsLimit | None = None,
) -> tuple[RevalidationVerdict, dict[str, Any], str]:
    """(verdict, documents to publish under the run, Markdown for the Prefect run's artifact). With a
    ``failed_requests`` limit, failed requests are judged on it, not by ``fail_on``."""
    report = check_gates(current, gates, fail_on, failed_requests)
    reasons = [f"gate {result.expression} on {result.model_key or 'the run'}: {result.reason}"
               for result in report.gates if not result.passed]  # fmt: skip
    if report.severity is not None and not report.severity.passed:
        reasons.append(f"--fail-on {report.severity.fail_on}: {report.severity.reason}")
    if report.failed_requests is not None and not report.failed_requests.passed:
        reasons.append(f"failed requests: {report.failed_requests.reason}")
    comparison: Comparison | None = None
    approval = None
    if baseline is not None:
        approval, baseline_run = baseline
        comparison = compare_runs(baseline_run, current)
        comparison.gates = report
        if comparison.nothing_comparable and comparison.compared is not None:
            reasons.append(
                f"not comparable with baseline run {approval.run_id}: {comparison.compared.nothing_comparable_reason}"
            )
        elif fail_on_regression and comparison.regressed:
            reasons.append(
                f"regression against baseline run {approval.run_id}: {len(comparison.significantly_worse)} metric(s) "
                f"significantly worse{_worst(comparison)}, {len(comparison.newly_failing)} case(s) newly failing"
            )
    changes = significant(comparison) if comparison else []
    verdict = RevalidationVerdict(
        verdict=_verdict(comparison, reasons),
        name=name,
        run_id=current.run_id,
        baseline=approval,
        baseline_note=baseline_note if comparison is None else "",
        significantly_worse=len(comparison.significantly_worse) if comparison else 0,
        significantly_better=sum(delta.change == "better" for delta in changes),
        newly_failing=len(comparison.newly_failing) if comparison else 0,
        new_problems=sum(change.status == "new" for change in comparison.problem_changes) if comparison else 0,
        fail_on_regression=fail_on_regression,
        gates=report,
        breached=bool(reasons),
        reasons=reasons,
        compared=comparison.compared if comparison else None,
    )
    documents: dict[str, Any] = {
        f"{FOLDER}/verdict.json": verdict.model_dump(mode="json"),
        f"{FOLDER}/gates.json": report.model_dump(mode="json"),
    }
    if comparison is not None:
        documents[f"{FOLDER}/comparison.json"] = comparison.model_dump(mode="json")
        documents[f"{FOLDER}/comparison.md"] = comparison_markdown(comparison)
        documents[f"{FOLDER}/comparison.html"] = comparison_html(comparison)
    return verdict, documents, verdict_markdown(verdict, comparison)


def _verdict(comparison: Comparison | None, reasons: list[str]) -> Verdict:
    if comparison is not None and comparison.nothing_comparable:
        return "not comparable"
    if reasons:
        return "fail"
    return "pass" if comparison is not None else "no baseline"


def _worst(comparison: Comparison, shown: int = 3) -> str:
    """The primary metrics that got worse, first few by size, so the run's state message names them."""
    worse = sorted((d for d in comparison.significantly_worse if d.is_primary), key=lambda d: -abs(d.delta or 0))
    named = [f"{d.model_key} {d.evaluator}.{d.metric} {d.baseline_mean:.3g} -> {d.current_mean:.3g}{_interval(d)}"
             for d in worse[:shown] if d.baseline_mean is not None and d.current_mean is not None]  # fmt: skip
    return f" ({'; '.join(named)}{'; ...' if len(worse) > shown else ''})" if named else ""


def _interval(delta: MetricDelta) -> str:
    if delta.ci_low is None or delta.ci_high is None:
        return ""
    return f" (delta {delta.delta:+.3g}, 95% interval [{delta.ci_low:+.3g}, {delta.ci_high:+.3g}])"


def recorded_verdict(run: RunDocuments) -> RevalidationVerdict | None:
    """The run's own re-validation verdict (revalidation/verdict.json); None for a run that was not one."""
    document = run.get(f"{FOLDER}/verdict.json")
    return RevalidationVerdict.model_validate(document) if isinstance(document, dict) else None


def verdict_words(verdict: RevalidationVerdict | None) -> str:
    """The verdict and why, in one line, for the person who approves the run as a baseline."""
    if verdict is None:
        return f"none recorded: not a re-validation run (it has no {FOLDER}/verdict.json)"
    why = "; ".join(verdict.reasons)
    if verdict.verdict == "fail":
        return f"FAILED: {why}"
    if verdict.verdict == "not comparable":
        return f"FAILED, not comparable with its baseline: {why}"
    if verdict.verdict == "pass" and verdict.baseline is not None:
        return f"passed: compared with baseline run {verdict.baseline.run_id}, nothing failed"
    return f"no baseline: nothing was compared, nothing failed. {verdict.baseline_note}".strip()
