"""``assay mrm run``: the nine-step MRM workflow (topic modeling ... robustness) with review pauses."""

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from assay.cli import inputs
from assay.cli.common import console, options, user_errors
from assay.escaping import for_terminal

app = typer.Typer(help="The model risk management workflow.", no_args_is_help=True)


@app.command("run")
def run(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for every step's output and the artifacts.")],
    corpus: Annotated[
        Path | None, typer.Option(help="Folder of .md/.txt documents; default: the sample corpus.")
    ] = None,
    host: Annotated[
        list[str] | None, typer.Option("--host", help="Host type or host file (.json or .toml); repeatable.")
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive/--non-interactive",
            help="Pause for reviewers in the Prefect UI, or decide from --approvals and policies.",
        ),
    ] = True,
    approvals: Annotated[Path | None, typer.Option(help="Reviewer decisions written in advance (JSON).")] = None,
    per_topic: Annotated[int, typer.Option(help="Test cases per topic and generator budget.", min=1)] = 3,
    name: Annotated[str, typer.Option(help="Name of the workflow's artifacts in the store.")] = "mrm",
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = 0,
) -> None:
    """Run the MRM workflow and print each step's outcome and wall time."""
    with user_errors():
        inputs.interactive_review_possible(interactive)
        hosts = inputs.hosts(host or ["sample-rag"])
        if corpus is not None:
            inputs.corpus_folder(corpus)
        if approvals is not None:
            inputs.approvals_file(approvals)
        inputs.output_folder(out)
        started = time.perf_counter()
        summary = run_workflow(
            out=str(out),
            corpus=str(corpus) if corpus else None,
            hosts=hosts,
            interactive=interactive,
            approvals=str(approvals) if approvals else None,
            per_topic=per_topic,
            name=name,
            seed=seed,
        )
        command_wall = time.perf_counter() - started
    print_workflow(summary, out, command_wall)


def run_workflow(**parameters: Any) -> dict[str, Any]:
    from assay.config import load_settings
    from assay.prefect_env import configure_prefect

    configure_prefect(load_settings())
    from flows.mrm import mrm_workflow
    from flows.terminal import hide_tracebacks_on_terminal

    if not options.debug:
        hide_tracebacks_on_terminal()
    return mrm_workflow(**parameters)


def print_workflow(summary: dict[str, Any], out: Path, command_wall: float) -> None:
    table = Table("step", "wall s", "outcome", title=f"MRM workflow, run {for_terminal(summary['run_id'])}")
    for step, info in summary["steps"].items():
        outcome = {key: value for key, value in info.items() if key not in ("status", "wall_s", "artifacts")}
        table.add_row(for_terminal(step), f"{info['wall_s']:.1f}", for_terminal(_short(outcome)))
    console.print(table)
    for decision in summary["decisions"]:
        console.print(
            f"decision [bold]{for_terminal(decision['step'])}[/]: by {for_terminal(decision['decided_by'])} "
            f"({for_terminal(decision['note'])})",
            highlight=False,
        )
    timing = summary.get("timing", {})
    library = timing.get("library_s", 0.0)
    console.print(
        f"total {command_wall:.1f} s (flow {timing.get('total_wall_s', 0.0):.1f} s, of which library code "
        f"{library:.1f} s; outside library code, i.e. Prefect and start-up: "
        f"{(command_wall - library) / command_wall:.0%})"
    )
    folder = for_terminal(out)
    console.print(
        f"artifacts: {folder}/artifacts/ (corpus_patch.md, system_prompt_extension.md, guardrails.json), "
        f"{folder}/report.json, {folder}/workflow_summary.json",
        highlight=False,
    )


def _short(outcome: dict[str, Any]) -> str:
    text = json.dumps(outcome, default=str)
    return text if len(text) <= 90 else text[:89] + "…"
