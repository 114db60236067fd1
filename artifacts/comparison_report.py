"""A comparison as people read it: Markdown (for a Prefect artifact or a pull request) and a self-contained
HTML page with a delta chart. Every model key, question, reason and problem text came from a run, so it is
escaped for its medium (``for_markdown_cell``, autoescaped templates, ``figure_text`` inside the chart)."""

from collections.abc import Callable

import plotly.graph_objects as go
from assay.artifacts.report.page import Section, figure_html, figure_text, render, render_page

from assay.escaping import for_markdown_cell, for_markdown_text
from assay.models.comparison import Comparison, MetricDelta

MAX_MARKDOWN_ROWS = 50


def significant(comparison: Comparison) -> list[MetricDelta]:
    return [delta for delta in comparison.deltas if delta.change in ("worse", "better")]


def comparison_markdown(comparison: Comparison) -> str:
    cell = for_markdown_cell
    worse = comparison.significantly_worse
    new = [change for change in comparison.problem_changes if change.status == "new"]
    resolved = [change for change in comparison.problem_changes if change.status == "resolved"]
    lines = [
        "# Assay comparison",
        "",
        f"- Baseline: {cell(comparison.baseline.run_id or '-')} ({cell(comparison.baseline.source)})",
        f"- Current: {cell(comparison.current.run_id or '-')} ({cell(comparison.current.source)})",
        f"- {len(worse)} metrics significantly worse, {len(significant(comparison)) - len(worse)} significantly "
        f"better; {len(comparison.newly_failing)} cases newly failing; {len(new)} new problems, "
        f"{len(resolved)} resolved.",
        f"- Deltas: current - baseline over scored cases, {comparison.confidence:.0%} bootstrap interval "
        f"({comparison.resamples} resamples, seed {comparison.seed}), paired by test case where the runs share cases.",
        "",
        "## What was compared",
        "",
        *compared_lines(comparison),
        *_left_out_table(comparison),
        "",
        "## Significant changes",
        "",
    ]
    rows = significant(comparison)
    if rows:
        lines += ["| model | metric | baseline | current | delta | 95% interval | pairing | change |",
                  "|---|---|---:|---:|---:|---|---|---|"]  # fmt: skip
        for delta in rows[:MAX_MARKDOWN_ROWS]:
            lines.append(
                f"| {cell(delta.model_key)} | {cell(delta.evaluator)}.{cell(delta.metric)} | "
                f"{_number(delta.baseline_mean)} | {_number(delta.current_mean)} | {_number(delta.delta)} | "
                f"[{_number(delta.ci_low)}, {_number(delta.ci_high)}] | {delta.pairing} | **{delta.change}** |"
            )
    else:
        lines.append("No metric changed significantly.")
    lines += ["", "## Cases that changed verdict", ""]
    if comparison.case_changes:
        lines += ["| change | model | evaluator | test case | baseline | current |", "|---|---|---|---|---:|---:|"]
        for change in comparison.case_changes[:MAX_MARKDOWN_ROWS]:
            lines.append(
                f"| {change.change} | {cell(change.model_key)} | {cell(change.evaluator)} | "
                f"{cell(change.test_case_key)} | {_number(change.baseline_value)} | {_number(change.current_value)} |"
            )
    else:
        lines.append("No case changed its verdict.")
    lines += ["", "## Problems", ""]
    if comparison.problem_changes:
        lines += ["| status | severity | key | description |", "|---|---|---|---|"]
        for problem in comparison.problem_changes[:MAX_MARKDOWN_ROWS]:
            lines.append(
                f"| {problem.status} | {cell(problem.severity)} | {cell(problem.key)} | {cell(problem.description)} |"
            )
    else:
        lines.append("The same problems in both runs.")
    lines += ["", "## Not compared", "", *unmatched_lines(comparison)]
    left_out = comparison.compared.left_out if comparison.compared else []
    if max(len(rows), len(comparison.case_changes), len(left_out)) > MAX_MARKDOWN_ROWS:
        lines += ["", f"Tables are cut at {MAX_MARKDOWN_ROWS} rows; comparison.json has every row."]
    return "\n".join(lines) + "\n"


def compared_lines(comparison: Comparison, text: Callable[[object], str] = for_markdown_text) -> list[str]:
    """How much was compared, first, so that "0 worse" is read against it (what was left out follows, as each
    medium lists it). ``text`` escapes the run's words for the medium."""
    compared = comparison.compared
    if compared is None:
        return ["Not recorded: this comparison was written before comparison schema version 2."]
    lines = []
    if compared.nothing_comparable:
        lines += [f"**Nothing was comparable**: {text(compared.nothing_comparable_reason)}. No "
                  "regression, and no absence of one, can be concluded from this comparison.", ""]  # fmt: skip
    by_case = compared.metrics_compared - compared.samples_compared
    lines.append(
        f"- {by_case} of {compared.metrics_in_both} (model, evaluator, metric) in both runs compared "
        f"case by case; {compared.cases_matched} test cases in both runs, {compared.cases_compared} scored in both."
    )
    if compared.samples_compared:
        lines.append(
            f"- {compared.samples_compared} compared as independent production samples (labs imported from traces: "
            "different requests in each run; the interval is an unpaired bootstrap of the difference in means)."
        )
    return lines


def _left_out_table(comparison: Comparison) -> list[str]:
    left_out = comparison.compared.left_out if comparison.compared else []
    if not left_out:
        return []
    return ["", "| left out | reason | detail |", "|---|---|---|"] + [
        f"| {for_markdown_cell(item.item)} | {item.reason} | {for_markdown_cell(item.detail)} |"
        for item in left_out[:MAX_MARKDOWN_ROWS]
    ]


def unmatched_lines(comparison: Comparison, text: Callable[[object], str] = for_markdown_cell) -> list[str]:
    """What "What was compared" does not already list: problems not compared; everything for old documents."""
    unmatched = comparison.unmatched
    notes = [f"- {text(note)}" for note in unmatched.notes]
    if comparison.compared is not None:
        return notes or ["Nothing else was left out (see What was compared)."]
    parts = {
        "models only in the baseline": unmatched.models_only_in_baseline,
        "models only in the current run": unmatched.models_only_in_current,
        "evaluators only in the baseline": unmatched.evaluators_only_in_baseline,
        "evaluators only in the current run": unmatched.evaluators_only_in_current,
    }
    lines = [f"- {name}: {', '.join(text(item) for item in items)}" for name, items in parts.items() if items]
    return lines + notes or ["Everything in one run was matched in the other."]


def comparison_html(comparison: Comparison) -> str:
    worse = len(comparison.significantly_worse)
    overview = render(
        "comparison/overview.html.j2",
        comparison=comparison,
        worse=worse,
        better=len(significant(comparison)) - worse,
        newly_failing=len(comparison.newly_failing),
        newly_passing=sum(1 for change in comparison.case_changes if change.change == "newly passes"),
        new_problems=sum(1 for change in comparison.problem_changes if change.status == "new"),
        resolved_problems=sum(1 for change in comparison.problem_changes if change.status == "resolved"),
    )
    ordered = sorted(comparison.deltas, key=lambda d: (d.change not in ("worse", "better"), not d.is_primary))
    sections = [
        Section("compared", "What was compared", render("comparison/compared.html.j2", comparison=comparison)),
        Section("overview", "Overview", overview),
        Section(
            "deltas",
            "Metric deltas",
            render("comparison/deltas.html.j2", chart=delta_chart(comparison), deltas=ordered),
        ),
        Section(
            "cases", "Cases that changed verdict", render("comparison/cases.html.j2", changes=comparison.case_changes)
        ),
        Section(
            "problems",
            "New and resolved problems",
            render("comparison/problems.html.j2", changes=comparison.problem_changes),
        ),
        Section("unmatched", "Not compared, and gates", render("comparison/unmatched.html.j2", comparison=comparison)),
    ]
    subtitle = f"baseline {comparison.baseline.run_id or comparison.baseline.source} -> current " + (
        comparison.current.run_id or comparison.current.source
    )
    return render_page("Assay comparison", sections, subtitle=subtitle, data=comparison.model_dump(mode="json"))


def delta_chart(comparison: Comparison) -> object:
    """Primary metrics' deltas with their intervals as error bars, one colour per model; 0 marked. Only metrics
    whose means lie on a 0-1 scale share the axis (a token count's delta would flatten every score's); the
    table below lists all."""
    figure = go.Figure()
    primary = [
        delta
        for delta in comparison.deltas
        if delta.is_primary and delta.delta is not None and _unit_scale(delta.baseline_mean, delta.current_mean)
    ]
    for model_key in dict.fromkeys(delta.model_key for delta in primary):
        mine = [delta for delta in primary if delta.model_key == model_key]
        figure.add_trace(
            go.Scatter(
                x=[delta.delta for delta in mine],
                y=[figure_text(f"{delta.evaluator}.{delta.metric}") for delta in mine],
                mode="markers",
                name=figure_text(model_key),
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": [(d.ci_high - d.delta) if d.ci_high is not None else 0 for d in mine],
                    "arrayminus": [(d.delta - d.ci_low) if d.ci_low is not None else 0 for d in mine],
                },
                hovertext=[
                    figure_text(f"{d.change}; {'higher' if d.higher_is_better else 'lower'} is better") for d in mine
                ],
            )
        )
    figure.add_vline(x=0, line_dash="dash", line_color="#5f6368")
    figure.update_layout(
        title="Primary metrics on a 0-1 scale: current - baseline (95% interval)",
        xaxis_title="delta",
        height=max(260, 28 * len({(d.evaluator, d.metric) for d in primary}) + 120),
    )
    return figure_html(figure)


def _unit_scale(*values: float | None) -> bool:
    return all(value is not None and 0.0 <= value <= 1.0 for value in values)


def _number(value: float | None) -> str:
    return "unscored" if value is None else f"{value:.3f}"
