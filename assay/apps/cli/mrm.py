"""``assay mrm run``: the nine-step MRM workflow (topic modeling ... robustness) with review pauses."""

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from assay.apps.cli import inputs
from assay.apps.cli.common import command_group, console, options, user_errors
from assay.escaping import for_terminal
from assay.models.workflow import RUN_DEFAULTS

app = command_group("The model risk management workflow.")


@app.command("run")
def run(
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Export folder for the run's files; default <assay home>/exports/<run id>."),
    ] = None,
    corpus: Annotated[
        Path | None, typer.Option(help="Folder of .md/.txt documents; default: the sample corpus.")
    ] = None,
    host: Annotated[
        list[str] | None, typer.Option("--host", help="Host type or host file (.json or .toml); repeatable.")
    ] = None,
    evaluator: Annotated[
        list[str] | None,
        typer.Option(
            "--evaluator",
            help="Evaluator of step 4; repeatable; 'all' for every one that applies. Default: 'recommended', the "
            "offline checks that mean something on any suite (no reference n-gram or edit metric).",
        ),
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive/--non-interactive",
            help="Pause for reviewers in the Prefect UI, or decide from --approvals and policies.",
        ),
    ] = True,
    approvals: Annotated[Path | None, typer.Option(help="Reviewer decisions written in advance (JSON).")] = None,
    parameters: Annotated[
        Path | None,
        typer.Option(
            help="Step parameters (JSON or TOML): topic_modeling, test_generation, test_validation, calibration, "
            "robustness; options below override it."
        ),
    ] = None,
    per_topic: Annotated[
        int | None,
        typer.Option(
            "--per-topic-per-generator",
            help="Test cases each question generator writes per topic (3 generators and 40 topics at 1: up to 120).",
            min=1,
        ),
    ] = None,
    generator: Annotated[list[str] | None, typer.Option("--generator", help="Question generator; repeatable.")] = None,
    variation: Annotated[
        list[str] | None, typer.Option("--variation", help="Perturbator of step 8 (input variations); repeatable.")
    ] = None,
    adversarial: Annotated[
        list[str] | None, typer.Option("--adversarial", help="Perturbator of step 9 (adversarial); repeatable.")
    ] = None,
    intensity: Annotated[list[str] | None, typer.Option("--intensity", help="low, medium or high; repeatable.")] = None,
    name: Annotated[str, typer.Option(help="Name of the workflow's artifacts in the store.")] = RUN_DEFAULTS.mrm_name,
    seed: Annotated[int, typer.Option(help="Seed of every random choice.")] = RUN_DEFAULTS.seed,
) -> None:
    """Run the MRM workflow and print each step's outcome and time."""
    with user_errors():
        inputs.interactive_review_possible(interactive)
        from assay.hosts.files import DEFAULT_HOSTS

        hosts = inputs.hosts(host or list(DEFAULT_HOSTS))
        if corpus is not None:
            inputs.corpus_folder(corpus)
        if approvals is not None:
            inputs.approvals_file(approvals)
        if out is not None:
            inputs.output_folder(out)
        steps = inputs.workflow_parameters(
            parameters,
            per_topic=per_topic,
            generators=generator,
            variations=variation,
            adversarial=adversarial,
            intensities=intensity,
        )
        for note in steps.deprecation_notes:
            console.print(f"[yellow]note:[/yellow] {parameters}: {note}", highlight=False, soft_wrap=True)
        started = time.perf_counter()
        summary = run_workflow(
            out=str(out) if out else None,
            corpus=str(corpus) if corpus else None,
            hosts=hosts,
            evaluators=evaluator,
            interactive=interactive,
            approvals=str(approvals) if approvals else None,
            name=name,
            seed=seed,
            **steps.model_dump(),
        )
        command_wall = time.perf_counter() - started
    print_workflow(summary, command_wall)


def run_workflow(**parameters: Any) -> dict[str, Any]:
    from assay.apps.cli.server import connect

    ready = connect(meanwhile=preload_first_step)
    from assay.flows.mrm import mrm_workflow
    from assay.flows.terminal import console_to_current_stderr, hide_tracebacks_on_terminal

    console_to_current_stderr()
    if not options.debug:
        hide_tracebacks_on_terminal()
    ready()
    return mrm_workflow(**parameters)


def preload_first_step() -> None:
    """Load the embedding model and import the topic-modeling libraries, which the first step does anyway:
    on a first run the kept server spends ~20 s creating its database, and this fills that wait."""
    from assay.config import load_settings
    from assay.embeddings import shared_engine

    try:  # only ahead of time: a failure here is met, and reported, by the step that needs it
        settings = load_settings()
        shared_engine(settings.embedding_model, settings.cache_path.resolve()).load()  # the engine the tasks use
        import bertopic  # noqa: F401 - imported by topic modeling; cached in sys.modules
        import umap  # noqa: F401
    except Exception:
        pass


def print_workflow(summary: dict[str, Any], command_wall: float) -> None:
    table = Table("step", "computed s", "outcome", title=f"MRM workflow, run {for_terminal(summary['run_id'])}")
    for step, info in summary["steps"].items():
        outcome = {key: value for key, value in info.items() if key not in ("status", "wall_s", "artifacts")}
        table.add_row(for_terminal(step), f"{info['wall_s']:.1f}", for_terminal(_short(outcome)))
    console.print(table)
    for decision in summary["decisions"]:
        who = decision.get("reviewer") or decision["decided_by"]
        console.print(
            f"decision [bold]{for_terminal(decision['step'])}[/]: by {for_terminal(who)} "
            f"({for_terminal(decision['note'])})",
            highlight=False,
        )
    library = summary.get("timing", {}).get("library_s", 0.0)
    console.print(
        f"total {command_wall:.1f} s, of which library code {library:.1f} s in this attempt "
        "(computed s: the step's task runs, over every attempt of the run)"
    )
    folder = for_terminal(summary.get("export", ""))
    console.print(
        f"artifacts: {folder}/artifacts/ (corpus_patch.md, system_prompt_extension.md, guardrails.json), "
        f"{folder}/report.json, {folder}/workflow_summary.json",
        highlight=False,
    )
    report = Path(summary.get("export", "")) / "interpretation.html"
    if report.is_file():  # the last line, so a script (or `make demo`) can take the path from it
        console.print(f"HTML report: {for_terminal(report.resolve())}", highlight=False, soft_wrap=True)


def _short(outcome: dict[str, Any]) -> str:
    text = json.dumps(outcome, default=str)
    return text if len(text) <= 90 else text[:89] + "…"
