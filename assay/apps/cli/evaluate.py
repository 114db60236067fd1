"""``assay evaluate``, ``assay demo`` and the catalogue listings."""

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from assay.apps.cli import inputs
from assay.apps.cli.common import command_group, console, options, user_errors
from assay.apps.cli.gates import GATE_HELP, apply_gates, validated_gates
from assay.apps.cli.plugins import listed, listed_unavailable, print_unavailable
from assay.escaping import for_terminal
from assay.models.evaluation import DEFAULT_EVALUATORS, on_good_side

evaluators_app = command_group("The evaluator catalogue.")
hosts_app = command_group("Systems under test that Assay can call.")


@evaluators_app.command("list")
def list_evaluators(
    as_json: Annotated[bool, typer.Option("--json", help="Full metadata as JSON.")] = False,
) -> None:
    """List every registered evaluator with its metrics and package, and the installed plugins that could not
    be loaded with the reason."""
    from assay.evaluators import evaluator_class, evaluator_ids
    from assay.evaluators.registry import evaluator_origin, unavailable_evaluators

    ids = evaluator_ids()
    specs = [(evaluator_class(evaluator_id).full_spec(), evaluator_origin(evaluator_id)) for evaluator_id in ids]
    if as_json:
        entries = [listed(spec.model_dump(mode="json"), origin) for spec, origin in specs]
        console.print_json(json.dumps(entries + listed_unavailable(unavailable_evaluators())))
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("domain", no_wrap=True)
    table.add_column("primary metric (pass when)", no_wrap=True)
    table.add_column("needs", no_wrap=True)
    table.add_column("package", no_wrap=True, min_width=8)
    for spec, origin in specs:
        primary = spec.primary_metric
        rule = "" if primary.threshold is None else f" {'>=' if primary.higher_is_better else '<='} {primary.threshold}"
        table.add_row(
            for_terminal(spec.id),
            spec.domain,
            for_terminal(f"{primary.key}{rule}"),
            for_terminal(", ".join(spec.needs) or "-"),
            for_terminal(origin.package),
        )
    console.print(table)
    print_unavailable(unavailable_evaluators())


@hosts_app.command("list")
def list_hosts(
    as_json: Annotated[bool, typer.Option("--json", help="Full metadata (specs) as JSON.")] = False,
) -> None:
    """List every registered host type with its metadata and package, and the installed plugins that could not
    be loaded with the reason."""
    from assay.hosts.registry import host_origin, host_specs, unavailable_hosts

    specs = [(spec, host_origin(spec.id)) for spec in host_specs()]
    if as_json:
        entries = [listed(spec.model_dump(mode="json"), origin) for spec, origin in specs]
        console.print_json(json.dumps(entries + listed_unavailable(unavailable_hosts())))
        return
    table = Table(box=None, pad_edge=False)
    for column in ("id", "name", "kind", "protocol", "returns", "settings", "package"):
        table.add_column(column, no_wrap=column in ("id", "kind"))
    for spec, origin in specs:
        returns = [name for name, flag in (("context", spec.returns_context), ("tokens", spec.returns_tokens),
                                            ("cost", spec.returns_cost)) if flag]  # fmt: skip
        protocol = spec.protocol if spec.same_protocol_as is None else f"{spec.protocol} (as {spec.same_protocol_as})"
        settings = ", ".join(f"{s.name}*" if s.required else s.name for s in spec.settings)
        table.add_row(
            for_terminal(spec.id),
            for_terminal(spec.display_name),
            spec.model_type,
            for_terminal(protocol),
            ", ".join(returns) or "-",
            for_terminal(settings or "-"),
            for_terminal(origin.package),
        )
    console.print(table)
    console.print("[dim]* required setting; --json for the full specs[/]")
    print_unavailable(unavailable_hosts())


def evaluate(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for results.json files and summary.json.")],
    suite: Annotated[Path | None, typer.Option(help="Test suite to ask the hosts.")] = None,
    suite_format: Annotated[
        str,
        typer.Option(
            help="Format of --suite: auto (by content) | assay | eval-studio-suite | mlflow | mlflow-genai | "
            "ragas | deepeval | promptfoo."
        ),
    ] = "auto",
    lab: Annotated[Path | None, typer.Option(help="Test lab with precomputed answers; no host is called.")] = None,
    lab_format: Annotated[
        str,
        typer.Option(
            help="Format of --lab: auto (by content) | assay | eval-studio-testlab | mlflow | mlflow-genai | "
            "ragas | deepeval | promptfoo."
        ),
    ] = "auto",
    host: Annotated[
        list[str] | None, typer.Option("--host", help="Host type or host file (.json or .toml); repeatable.")
    ] = None,
    evaluators: Annotated[str, typer.Option(help="Comma-separated evaluator ids, or 'all'.")] = ",".join(
        DEFAULT_EVALUATORS
    ),
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="Evaluator parameter EVALUATOR.PARAMETER=VALUE, e.g. rouge.use_stemmer=true; repeatable; "
            "overrides --evaluators-config. 'assay evaluators list --json' shows each evaluator's parameters.",
        ),
    ] = None,
    evaluators_config: Annotated[
        Path | None,
        typer.Option(
            "--evaluators-config",
            help='Evaluator parameters as JSON or TOML: {"rouge": {"use_stemmer": true}}; --param overrides it.',
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="Evaluation name in the artifact store.")] = None,
    run_id: Annotated[str | None, typer.Option(help="Continue this run id instead of deciding from --out.")] = None,
    judge: Annotated[
        Path | None,
        typer.Option(help="LLM judge endpoint file (.json or .toml); default: ASSAY_JUDGE__* settings, if any."),
    ] = None,
    judge_repeats: Annotated[
        int, typer.Option(min=1, max=10, help="Ask the judge N times per case; verdicts that flip are flagged flaky.")
    ] = 1,
    judge_cascade: Annotated[
        bool, typer.Option(help="Judge only the cases an offline evaluator finds uncertain (near its threshold).")
    ] = False,
    judge_band: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Half-width of the cascade's uncertain band around the threshold.")
    ] = 0.15,
    judge_budget: Annotated[
        int | None,
        typer.Option(min=0, help="At most N cases per judged evaluator go to the judge (most uncertain first)."),
    ] = None,
    dask_address: Annotated[
        str | None,
        typer.Option(help="Run host calls and evaluators in shards on this Dask scheduler (tcp://host:8786)."),
    ] = None,
    dask_workers: Annotated[
        int | None,
        typer.Option(min=0, help="Run them in shards on a local Dask cluster of N worker processes (0: no Dask)."),
    ] = None,
    shard_size: Annotated[
        int | None, typer.Option(min=1, help="Test cases per shard on Dask (default: ASSAY_SHARD_SIZE, 250).")
    ] = None,
    gate: Annotated[list[str] | None, typer.Option("--gate", help=GATE_HELP)] = None,
    fail_on: Annotated[
        Literal["high", "medium", "any"] | None,
        typer.Option(help="Exit 3 when the run has a problem of this severity or worse (any: also low)."),
    ] = None,
) -> None:
    """Evaluate a suite against hosts, or a test lab's precomputed answers, and print a per-model table.

    Exit codes: 0 the run finished and every gate passed (or none was given); 1 unexpected error; 2 bad input
    (nothing was run); 3 a --gate or --fail-on was breached (gates.json in --out says which and why)."""
    with user_errors():
        if suite is None and lab is None:
            raise ValueError("give --suite (with --host) or --lab")
        if suite is not None and lab is not None:
            raise ValueError("give either --suite or --lab, not both")
        if lab is not None and host:
            raise ValueError("--host is for --suite; a --lab already holds its answers")
        from assay.hosts.files import DEFAULT_HOSTS

        hosts = inputs.hosts(host or list(DEFAULT_HOSTS)) if suite is not None else []
        evaluator_ids = inputs.evaluator_ids(evaluators)
        gates = validated_gates(gate or [], evaluator_ids)  # first: reading a suite or lab can take minutes
        evaluator_parameters = inputs.evaluator_parameters(evaluators_config, param or [], evaluator_ids)
        if suite is not None:
            inputs.suite_file(suite, suite_format)
        if lab is not None:
            inputs.lab_file(lab, lab_format)
        inputs.output_folder(out)
        judge_endpoint = inputs.judge_file(judge) if judge is not None else None
        judge_options = {"repeats": judge_repeats, "cascade": judge_cascade, "band": judge_band, "budget": judge_budget}
        summary = _run_flow(
            **_scale_out(dask_address, dask_workers, shard_size),
            out=str(out),
            suite=str(suite) if suite else None,
            suite_format=suite_format,
            lab=str(lab) if lab else None,
            lab_format=lab_format,
            hosts=hosts,
            evaluators=evaluator_ids,
            evaluator_parameters=evaluator_parameters,
            name=name,
            run_id=run_id,
            judge=judge_endpoint,
            judge_options=judge_options,
        )
    print_summary(summary)
    for evaluator_id, reason in summary.get("skipped_evaluators", {}).items():
        console.print(f"[yellow]skipped[/] {for_terminal(evaluator_id)}: {for_terminal(reason)}", highlight=False)
    print_judge_account(summary.get("judge"), out)
    problems = summary.get("problems", {})
    folder = for_terminal(out)
    console.print(
        f"problems: {problems.get('high', 0)} high, {problems.get('medium', 0)} medium, {problems.get('low', 0)} low"
        f" ({folder}/problems/problems_and_actions.json); insights: {summary.get('insights', 0)}"
        f" ({folder}/insights/insights_and_actions.json)",
        highlight=False,
    )
    console.print(
        f"results: {folder}/<evaluator>/results.json and leaderboard.md, {folder}/summary.json", highlight=False
    )
    console.print(f"HTML report: {folder}/interpretation.html", highlight=False, soft_wrap=True)
    if gates or fail_on:
        apply_gates(out, gates, fail_on)


def demo(out: Annotated[Path, typer.Option("--out", "-o")] = Path("demo-output")) -> None:
    """Run the MRM workflow on the bundled sample corpus against both built-in sample RAG systems,
    deciding every review by policy, and print a short summary."""
    from assay.apps.cli.mrm import run

    run(
        out=out,
        corpus=None,
        host=["sample-rag", "sample-rag-keyword"],
        interactive=False,
        approvals=None,
        per_topic=1,
        name="sample-bank-demo",
        seed=0,
    )


def _scale_out(address: str | None, workers: int | None, shard_size: int | None) -> dict[str, Any]:
    """The flow parameters for the Dask flags, checked here before any flow starts with the rule the flow
    applies (``flows.scale_out.choose_scale_out``): without either flag the settings decide, in the flow."""
    from assay.flows.scale_out import CLI_NAMES, choose_scale_out

    scale_out = choose_scale_out(address, workers, shard_size or 0, names=CLI_NAMES)
    if not scale_out.on_dask:
        if shard_size is not None:
            raise ValueError("--shard-size applies on Dask: give --dask-address or --dask-workers too")
        return {"dask_address": address, "dask_workers": workers}
    console.print(for_terminal(scale_out.line()), highlight=False, soft_wrap=True)
    return {"dask_address": address, "dask_workers": workers, "shard_size": scale_out.shard_size}


def _run_flow(**parameters: Any) -> dict[str, Any]:
    from assay.apps.cli.server import connect

    ready = connect()
    from assay.flows.evaluate import evaluate_flow
    from assay.flows.terminal import console_to_current_stderr, hide_tracebacks_on_terminal

    console_to_current_stderr()
    if not options.debug:
        hide_tracebacks_on_terminal()
    ready()
    return evaluate_flow(**parameters)


def print_summary(summary: dict[str, Any]) -> None:
    """One row per evaluator (its primary metric), one column per model: readable for any number of
    evaluators. A mean that misses its threshold is shown in red; unscored cases are counted, never zero."""
    metrics = summary["metrics"]
    models = summary["models"]
    table = Table(
        "evaluator",
        "primary metric",
        *[
            f"{for_terminal(model['key'])}\n{model['answered']}/{model['answered'] + model['host_failures']} answered"
            for model in models
        ],
        title=f"{for_terminal(summary['test_lab'])} ({summary['test_cases']} test cases)",
    )
    for evaluator_id in summary["evaluators"]:
        per_model = [metrics[model["key"]].get(evaluator_id, {}) for model in models]
        primary = next((key for key, meta in per_model[0].items() if meta["is_primary"]), None)
        if primary is None:
            continue
        meta = per_model[0][primary]
        direction = ">=" if meta["higher_is_better"] else "<="
        threshold = "" if meta["threshold"] is None else f" {direction} {meta['threshold']}"
        table.add_row(
            for_terminal(evaluator_id),
            for_terminal(f"{primary}{threshold}"),
            *[_cell(model_metrics[primary]) for model_metrics in per_model],
        )
    console.print(table)


def print_judge_account(judge: dict[str, Any] | None, out: Path) -> None:
    """One line on what the LLM judge cost: calls made, cache hits, tokens, money, time, and where the evidence is."""
    if not judge:
        return
    total = judge["total"]
    cost = "cost unknown (no price for the judge model)" if total["cost"] is None else f"cost {total['cost']:.4f}"
    saved = f", {total['saved_by_cascade']} decided offline by the cascade" if total["saved_by_cascade"] else ""
    console.print(
        f"judge {for_terminal(judge['endpoint']['model'])}: {total['calls']} calls, {total['cache_hits']} from cache, "
        f"{total['failures']} failed, {total['input_tokens'] + total['output_tokens']} tokens "
        f"({total['input_tokens']} in, {total['output_tokens']} out), {cost}, {total['wall_s']:.1f} s{saved}; "
        f"evidence per case in {for_terminal(out)}/<evaluator>/results.json (details.judge)",
        highlight=False,
    )


def _cell(aggregate: dict[str, Any]) -> str:
    if aggregate["mean"] is None:
        return f"unscored ({aggregate['unscored']})"
    threshold, value = aggregate["threshold"], aggregate["mean"]
    fails = threshold is not None and not on_good_side(value, threshold, aggregate["higher_is_better"])
    text = f"{value:.3f} ({aggregate['scored']})"
    return f"[red]{text}[/]" if fails else text
