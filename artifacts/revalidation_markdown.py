"""The re-validation verdict as Prefect's Artifacts tab shows it: the verdict, the baseline and every reason first,
then tables of at most four short columns (Prefect's default UI, V1, clips a wider one at 1280 px) with the long
text (intervals, case keys, problem descriptions) in lists below them. V1 shows numeric HTML entities as they
are, so text from runs is escaped with ``for_prefect_markdown``; the full comparison is the run's
revalidation/comparison.md and comparison.html."""

from assay.artifacts.comparison_report import compared_lines, significant, unmatched_lines
from assay.artifacts.failed_requests import limit_words, percent

from assay.escaping import for_prefect_markdown, short_line
from assay.models.comparison import Comparison, MetricDelta
from assay.models.gates import GateReport
from assay.models.revalidation import RevalidationVerdict

MAX_LISTED = 20
"""Rows and list items per section; comparison.md and comparison.json have every one."""
CELL_CHARACTERS = 24
"""A table cell's text is cut to this (V1 does not wrap cells): four such columns fit its pane at 1280 px."""

STATUS = {"pass": "**passed**", "fail": "**FAILED**", "not comparable": "**FAILED: not comparable**",
          "no baseline": "**no baseline**, nothing compared"}  # fmt: skip
"""The artifact's headline per verdict; "not comparable" ends the run Failed like "fail"."""

text = for_prefect_markdown


def cell(value: object) -> str:
    """Text from a run, cut to ``CELL_CHARACTERS`` and escaped; the list below the table has it in full."""
    return text(short_line(value, CELL_CHARACTERS))


def verdict_markdown(verdict: RevalidationVerdict, comparison: Comparison | None) -> str:
    """The Prefect run's artifact: the verdict first, then who approved the baseline, then the details."""
    lines = [f"# Re-validation {text(verdict.name)}: {STATUS[verdict.verdict]}", ""]
    lines.append(f"- Run: {text(verdict.run_id or '-')}")
    if verdict.baseline is not None:
        approval = verdict.baseline
        who = (f"approved by {text(approval.approved_by)} at {approval.approved_at:%Y-%m-%d %H:%M} UTC"
               if approval.source == "person" else "named by the deployment's `baseline` parameter")  # fmt: skip
        lines.append(f"- Baseline: run {text(approval.run_id)}, {who}")
    else:
        lines.append(f"- Baseline: none compared. {text(verdict.baseline_note)}")
    requests = verdict.gates.failed_requests
    if requests is not None:
        share = percent(requests.failed / requests.requests) if requests.requests else "-"
        lines.append(f"- Failed requests: {requests.failed} of {requests.requests} ({share}); limit "
                     f"{limit_words(requests.limit)} of each model's requests: "
                     f"{'within' if requests.passed else 'BREACH'}")  # fmt: skip
    lines += [f"- Fails: {text(reason)}" for reason in verdict.reasons]
    lines += _gates(verdict.gates)
    if comparison is not None:
        lines += _compared(comparison)
    return "\n".join(lines) + "\n"


def _gates(report: GateReport) -> list[str]:
    """A row per gate and model; what a breached one measured is in the Fails lines, a passed one's below."""
    rows = [(cell(result.expression), cell(result.model_key or "-"),
             "not evaluable" if result.value is None else f"{result.value:.3f}", result.passed)
            for result in report.gates]  # fmt: skip
    if report.severity is not None:
        rows.append((f"--fail-on {report.severity.fail_on}", "all", f"{report.severity.matching} problem(s)",
                     report.severity.passed))  # fmt: skip
    if report.failed_requests is not None:
        limit = report.failed_requests.limit.max_share
        rows += [(f"failed requests <= {percent(limit)}", cell(model.model_key), percent(model.share),
                  model.share <= limit) for model in report.failed_requests.models]  # fmt: skip
    if not rows:
        return []
    lines = ["", "## Gates", "", "| gate | model | value | verdict |", "|---|---|---:|---|"]
    lines += [f"| {gate} | {model} | {value} | {'pass' if passed else 'BREACH'} |"
              for gate, model, value, passed in rows]  # fmt: skip
    passed = [f"- Passes: gate {text(result.expression)} on {text(result.model_key or 'the run')}: "
              f"{text(result.reason)}" for result in report.gates if result.passed]  # fmt: skip
    return lines + (["", *passed] if passed else [])


def _compared(comparison: Comparison) -> list[str]:
    """The comparison with the baseline, narrow: what was compared, the significant changes (a table of four
    columns, their intervals listed below it), the cases that changed verdict and the problems as lists."""
    lines = ["", f"## Compared with baseline run {text(comparison.baseline.run_id or '-')}", ""]
    lines += ["### What was compared", ""]
    lines += [f"- Deltas: current - baseline, with a {comparison.confidence:.0%} bootstrap interval; significant "
              "when the interval excludes 0.", *compared_lines(comparison, text)]  # fmt: skip
    left_out = comparison.compared.left_out if comparison.compared else []
    lines += [f"- Left out: {text(item.item)}: {item.reason}" + (f" ({text(item.detail)})" if item.detail else "")
              for item in left_out[:MAX_LISTED]]  # fmt: skip
    changes = significant(comparison)
    lines += ["", f"### Significant changes ({len(changes)})", ""]
    if changes:
        lines += ["| model | metric | baseline -> current | change |", "|---|---|---|---|"]
        lines += [f"| {cell(delta.model_key)} | {cell(f'{delta.evaluator}.{delta.metric}')} | "
                  f"{_number(delta.baseline_mean)} -> {_number(delta.current_mean)} | **{delta.change}** |"
                  for delta in changes[:MAX_LISTED]]  # fmt: skip
        lines += [""] + [_interval(delta) for delta in changes[:MAX_LISTED]]
    else:
        lines.append("No metric changed significantly.")
    lines += ["", f"### Cases that changed verdict ({len(comparison.case_changes)})", ""]
    lines += [f"- {change.change}: {text(change.test_case_key)} ({text(change.model_key)}, {text(change.evaluator)}) "
              f"{_number(change.baseline_value)} -> {_number(change.current_value)}"
              for change in comparison.case_changes[:MAX_LISTED]] or ["No case changed its verdict."]  # fmt: skip
    lines += ["", f"### Problems ({len(comparison.problem_changes)} new or resolved)", ""]
    problems = [f"- {problem.status}, {text(problem.severity)}: {text(problem.description)}"
                for problem in comparison.problem_changes[:MAX_LISTED]]  # fmt: skip
    lines += problems or ["The same problems in both runs."]
    lines += ["", "### Not compared", "", *unmatched_lines(comparison, text)]
    longest = max(len(changes), len(comparison.case_changes), len(comparison.problem_changes), len(left_out))
    if longest > MAX_LISTED:
        lines += ["", f"Each list stops at {MAX_LISTED}: revalidation/comparison.md in the run's folder has all."]
    return lines


def _interval(delta: MetricDelta) -> str:
    low, high = _number(delta.ci_low), _number(delta.ci_high)
    return (f"- {text(delta.model_key)} {text(delta.evaluator)}.{text(delta.metric)}: delta {_number(delta.delta)}, "
            f"{delta.pairing}, 95% interval from {low} to {high}")  # fmt: skip


def _number(value: float | None) -> str:
    return "unscored" if value is None else f"{value:.3f}"
