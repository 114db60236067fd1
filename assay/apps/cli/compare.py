"""``assay compare BASELINE CURRENT``: what changed between two runs."""

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.table import Table

from assay.apps.cli.common import console, show_error, user_errors
from assay.apps.cli.gates import GATE_BREACHED, GATE_HELP, print_gates
from assay.atomic import write_all_atomic
from assay.escaping import for_terminal

if TYPE_CHECKING:
    from assay.artifacts.report.run_documents import RunDocuments
    from assay.models.comparison import Comparison

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
NOTHING_COMPARABLE = 4
"""Exit code of ``assay compare`` when no test case was scored in both runs on any metric: "no regression"
would be vacuous, so it is never exit 0."""
MAX_LEFT_OUT_LINES = 10


def compare(
    baseline: Annotated[str, typer.Argument(help="The approved run: a run folder or a run id.")],
    current: Annotated[str, typer.Argument(help="The run to check: a run folder or a run id.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder for comparison.json/.md/.html (default: ./comparison-BASE-vs-CUR)."),
    ] = None,
    gate: Annotated[list[str] | None, typer.Option("--gate", help=f"On the current run. {GATE_HELP}")] = None,
    fail_on: Annotated[
        Literal["high", "medium", "any"] | None,
        typer.Option(help="Breach when the current run has a problem of this severity or worse."),
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 3 when a metric got significantly worse (its 95% interval entirely on the bad side of 0) "
            "or a case newly fails. Nothing comparable is exit 4 with or without this option.",
        ),
    ] = False,
) -> None:
    """Compare two runs (by run id or folder): per model and metric the delta with a bootstrap interval, cases
    that newly fail or pass, new and resolved problems. An MRM run is compared on its automated evaluation.

    Exit codes: 0 compared (and, when asked, no regression and every gate passed); 1 unexpected error;
    2 bad input (a run that cannot be read, a bad gate); 3 --fail-on-regression found a regression, or a
    --gate / --fail-on on the current run was breached; 4 nothing comparable (no test case scored in both
    runs on any metric both have: no case key, model, evaluator or metric in common, or all unscored), with or
    without --fail-on-regression (it wins over 3); the files are still written and say what was left out and why."""
    from assay.artifacts.comparison import compare_runs
    from assay.artifacts.comparison_report import comparison_html, comparison_markdown
    from assay.artifacts.gates import catalogue_from_run, check_gates, parse_gates, validate_gates

    with user_errors():
        gates = parse_gates(gate or [])
        before, after = _load(baseline), _load(current)
        if gates:
            validate_gates(gates, catalogue_from_run(after.evaluation()))
        comparison = compare_runs(before, after)
        if gates or fail_on:
            comparison.gates = check_gates(after, gates, fail_on)
        folder = out or Path(f"comparison-{_safe(before.run_id, 'baseline')}-vs-{_safe(after.run_id, 'current')}")
        folder.mkdir(parents=True, exist_ok=True)
        files = {
            "comparison.json": comparison.model_dump_json(indent=2),
            "comparison.md": comparison_markdown(comparison),
            "comparison.html": comparison_html(comparison),
        }
        write_all_atomic([(folder / name, text) for name, text in files.items()])
    print_changes(comparison)
    if comparison.gates is not None:
        print_gates(comparison.gates)
    console.print(f"comparison: {for_terminal(folder)}/comparison.{{json,md,html}}", highlight=False)
    if comparison.nothing_comparable and comparison.compared is not None:
        show_error(
            f"nothing comparable: {comparison.compared.nothing_comparable_reason}; "
            f"{folder}/comparison.md lists what was left out and why (exit {NOTHING_COMPARABLE})"
        )
        raise typer.Exit(code=NOTHING_COMPARABLE)
    breached = comparison.gates is not None and comparison.gates.breached
    if (fail_on_regression and comparison.regressed) or breached:
        raise typer.Exit(code=GATE_BREACHED)


def print_changes(comparison: "Comparison") -> None:
    """The significant changes and the count of everything else; the files hold every row."""
    changed = [delta for delta in comparison.deltas if delta.change in ("worse", "better")]
    table = Table(
        "model", "metric", "baseline", "current", "delta [95% interval]", "change", title="Significant changes"
    )
    for delta in changed:
        style = "red" if delta.change == "worse" else "green"
        table.add_row(
            for_terminal(delta.model_key),
            for_terminal(f"{delta.evaluator}.{delta.metric}"),
            _number(delta.baseline_mean),
            _number(delta.current_mean),
            f"{_number(delta.delta)} [{_number(delta.ci_low)}, {_number(delta.ci_high)}] ({delta.pairing})",
            f"[{style}]{delta.change}[/]",
        )
    if changed:
        console.print(table)
    else:
        console.print("no metric changed significantly")
    counts = {kind: 0 for kind in ("newly fails", "newly passes", "newly unscored", "newly scored")}
    for change in comparison.case_changes:
        counts[change.change] += 1
    new = sum(1 for change in comparison.problem_changes if change.status == "new")
    console.print(
        f"cases: {counts['newly fails']} newly fail, {counts['newly passes']} newly pass, "
        f"{counts['newly unscored']} newly unscored, {counts['newly scored']} newly scored; problems: {new} new, "
        f"{len(comparison.problem_changes) - new} resolved",
        highlight=False,
    )
    for case in comparison.newly_failing[:10]:
        console.print(
            f"  [red]newly fails[/] {for_terminal(case.model_key)} {for_terminal(case.evaluator)} "
            f"{for_terminal(case.test_case_key)}: {_number(case.baseline_value)} -> {_number(case.current_value)}",
            highlight=False,
        )
    print_left_out(comparison)


def print_left_out(comparison: "Comparison") -> None:
    """How much was compared, then what was not and why (the first few; comparison.md has them all)."""
    compared = comparison.compared
    for note in comparison.unmatched.notes:
        console.print(f"[yellow]not compared[/] {for_terminal(note)}", highlight=False)
    if compared is None:
        return
    style = "red" if compared.nothing_comparable else "green"
    by_case = compared.metrics_compared - compared.samples_compared
    samples = (f", {compared.samples_compared} as independent production samples (different requests)"
               if compared.samples_compared else "")  # fmt: skip
    console.print(
        f"compared: [{style}]{by_case}[/] of {compared.metrics_in_both} (model, evaluator, "
        f"metric) in both runs case by case{samples}; {compared.cases_matched} test cases in both runs, "
        f"[{style}]{compared.cases_compared}[/] scored in both",
        highlight=False,
    )
    for item in compared.left_out[:MAX_LEFT_OUT_LINES]:
        console.print(
            f"[yellow]left out[/] {for_terminal(item.item)}: {item.reason} ({for_terminal(item.detail)})",
            highlight=False,
        )
    if len(compared.left_out) > MAX_LEFT_OUT_LINES:
        console.print(f"... and {len(compared.left_out) - MAX_LEFT_OUT_LINES} more left out (comparison.md)")


def _load(reference: str) -> "RunDocuments":
    """A run folder, or a run id: its export folder or, when that is gone, the artifact store."""
    from assay.artifacts.report.run_documents import load_run

    if Path(reference).is_dir():
        return load_run(reference)
    from assay.config import load_settings
    from assay.storage.factory import open_artifact_store, open_object_store
    from assay.storage.runs import RunStates

    settings = load_settings()
    return load_run(reference, runs=RunStates(open_object_store(settings)), store=open_artifact_store(settings))


def _safe(run_id: str | None, default: str) -> str:
    return _UNSAFE.sub("_", run_id)[:60] if run_id else default


def _number(value: float | None) -> str:
    return "unscored" if value is None else f"{value:.3f}"
