"""Gates on the command line: validated before a run, checked after it, shown as a table, and exit 3."""

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer
from rich.table import Table

from assay.apps.cli.common import console
from assay.atomic import write_atomic
from assay.escaping import for_terminal

if TYPE_CHECKING:
    from assay.models.gates import Gate, GateReport

GATE_BREACHED = 3
"""Exit code of ``assay evaluate`` (a gate or --fail-on breached) and ``assay compare`` (also a regression)."""
GATE_HELP = (
    "Release gate METRIC>=X (also <=, >, <), repeatable. METRIC: evaluator id (its primary metric), "
    "evaluator.metric or a unique metric key; X: the share of scored cases that pass the metric's threshold "
    "(0.8 or 80%), per model; unscored cases are not in the denominator; a metric without a threshold is "
    "gated on its mean. A gate with no scored case breaches."
)


def validated_gates(expressions: list[str], evaluator_ids: list[str]) -> "list[Gate]":
    """Gates parsed and checked against the chosen evaluators' metrics before any flow runs: a typo is exit 2.

    Called first, before any suite, lab or judge is read (those can take seconds to minutes), and it reads
    only the evaluators' declared specs, which load no model. Under ``--evaluators all`` a gate may name
    any registered evaluator's metric (which of them run is decided by the lab, later)."""
    from assay.artifacts.gates import catalogue_from_specs, parse_gates, validate_gates
    from assay.evaluators import evaluator_class
    from assay.evaluators import evaluator_ids as registered_ids
    from assay.evaluators.selection import RECOMMENDED, selection_keyword

    gates = parse_gates(expressions)
    if not gates:
        return gates
    keyword = selection_keyword(list(evaluator_ids))
    chosen = {"all": registered_ids(), "recommended": list(RECOMMENDED)}.get(keyword or "", evaluator_ids)
    catalogue = catalogue_from_specs(evaluator_class(e).full_spec() for e in chosen)
    try:
        validate_gates(gates, catalogue)
    except ValueError as error:
        if "no evaluator or metric" not in str(error):
            raise
        known = ", ".join(f"{e} ({', '.join(m.key for m in metrics)})" for e, metrics in catalogue.items())
        raise ValueError(f"{error}; gates can name these evaluators and metrics: {known}") from None
    return gates


def apply_gates(out: Path, gates: "list[Gate]", fail_on: Literal["high", "medium", "any"] | None) -> None:
    """Check the finished run's gates, write ``gates.json``, print the table, exit 3 when one is breached."""
    from assay.artifacts.gates import check_gates
    from assay.artifacts.report.run_documents import read_folder

    report = check_gates(read_folder(out), gates, fail_on)
    write_atomic(out / "gates.json", report.model_dump_json(indent=2))
    print_gates(report)
    console.print(f"gates: {for_terminal(out)}/gates.json", highlight=False)
    if report.breached:
        raise typer.Exit(code=GATE_BREACHED)


def print_gates(report: "GateReport") -> None:
    """One row per gate and model, and one for --fail-on: verdict and the reason with its threshold source."""
    table = Table("gate", "model", "value", "verdict", "reason", title="Gates")
    for result in report.gates:
        value = "not evaluable" if result.value is None else f"{result.value:.3f}"
        verdict = "[green]pass[/]" if result.passed else "[red]BREACH[/]"
        table.add_row(
            for_terminal(result.expression), for_terminal(result.model_key or "-"), value, verdict,
            for_terminal(result.reason),
        )  # fmt: skip
    if report.severity is not None:
        verdict = "[green]pass[/]" if report.severity.passed else "[red]BREACH[/]"
        table.add_row(
            f"--fail-on {report.severity.fail_on}", "-", str(report.severity.matching), verdict,
            for_terminal(report.severity.reason),
        )  # fmt: skip
    console.print(table)
    outcome = "[red]breached: exit 3[/]" if report.breached else "[green]all gates pass[/]"
    console.print(f"gates {outcome}")
