"""``assay judges``: the prompt templates, a probe of a judge endpoint, and alignment with human labels."""

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from assay.apps.cli.common import command_group, console, user_errors
from assay.apps.cli.plugins import listed, listed_unavailable, print_unavailable
from assay.escaping import for_terminal

app = command_group("LLM judges: templates, endpoint check, alignment with people.")


@app.command("templates")
def templates(as_json: Annotated[bool, typer.Option("--json", help="Full templates as JSON.")] = False) -> None:
    """List the judge prompt templates (id, version, inputs, package): Assay's and those other packages add,
    and the installed ones that could not be loaded with the reason."""
    from assay.judges.templates import judge_templates, plugin_templates, template_origin

    with user_errors():
        found = [(item, template_origin(item.id)) for item in judge_templates().values()]
    unavailable = plugin_templates().unavailable
    if as_json:
        entries = [listed({"id": t.id, "version": t.version, "description": t.description, "inputs": list(t.inputs),
                           "system": t.system, "user": t.user, "schema": t.schema, "source": t.source}, origin)
                   for t, origin in found]  # fmt: skip
        console.print_json(json.dumps(entries + listed_unavailable(unavailable)))
        return
    table = Table("id", "version", "inputs", "description", "package", box=None, pad_edge=False)
    for item, origin in found:
        cells = (item.id, item.version, ", ".join(item.inputs), item.description, origin.package)
        table.add_row(*(for_terminal(cell) for cell in cells))  # a plugin's template is data, never markup
    console.print(table)
    print_unavailable(unavailable)


@app.command("check")
def check(
    judge: Annotated[
        Path | None, typer.Argument(help="Judge endpoint file (.json or .toml); default: ASSAY_JUDGE__* settings.")
    ] = None,
) -> None:
    """Ask the judge one question and say what works: the verdict, the structured-output mode it accepted,
    and whether it gives log-probabilities (GPTScore needs them)."""
    from assay.apps.cli.inputs import judge_file
    from assay.config import load_settings
    from assay.judges.client import JudgeClient
    from assay.judges.logprobs import logprobs_unavailable
    from assay.judges.templates import template
    from assay.models.judges import JudgeEndpoint

    with user_errors():
        endpoint = JudgeEndpoint.model_validate(judge_file(judge)) if judge else load_settings().judge
        if not endpoint.configured:
            raise ValueError("no judge endpoint: give a judge file or set ASSAY_JUDGE__BASE_URL and ASSAY_JUDGE__MODEL")
        client = JudgeClient(endpoint)
        reason = client.unavailable_reason()
        if reason:
            raise ValueError(reason)
        probe = template("sexism")
        call = client.run(lambda: client.ask(probe, {"question": "Who may open an account?",
                                                     "text": "Any adult may open an account."}))  # fmt: skip
        no_logprobs = logprobs_unavailable(client) if call.error is None else None
    console.print(f"judge {for_terminal(endpoint.label)}", highlight=False)
    if call.error is not None:
        console.print(f"[red]failed[/] ({call.error_kind}): {for_terminal(call.error)}", highlight=False)
        raise typer.Exit(1)
    console.print(
        f"[green]ok[/]: verdict {for_terminal(json.dumps(call.verdict))} in {call.latency_s or 0:.2f} s, "
        f"structured output: {call.structured_output}{' (after one repair)' if call.repaired else ''}, "
        f"{call.input_tokens} tokens in, {call.output_tokens} out",
        highlight=False,
    )
    gptscore = "yes (GPTScore works)"
    if no_logprobs:
        gptscore = f"no ({no_logprobs}): GPTScore evaluators will say unavailable"
    console.print(f"log-probabilities of a given text: {for_terminal(gptscore)}", highlight=False)


@app.command("align")
def align(
    results: Annotated[Path, typer.Option(help="The --out folder of assay evaluate (with <evaluator>/results.json).")],
    labels: Annotated[
        Path, typer.Option(help="Human labels: CSV (test_case_key,label[,model_key,evaluator,reviewer]) or JSON.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
) -> None:
    """Agreement and Cohen's kappa of each judged evaluator's verdicts with people's labels."""
    from assay.apps.cli.inputs import input_file
    from assay.judges.alignment import align as align_judges
    from assay.judges.alignment import load_labels, read_results

    with user_errors():
        documents = read_results(results)
        human, from_policy = load_labels(input_file(labels, "--labels"))
        if not human:
            raise ValueError(f"--labels {labels}: no human labels (policy-made labels are not people's)")
        report = align_judges(documents, human)
    rows: list[dict[str, Any]] = [vars(item) for item in report]
    if as_json:
        console.print_json(json.dumps({"alignment": rows, "policy_labels_left_out": from_policy}))
        return
    table = Table("evaluator", "pairs", "agreement", "Cohen's kappa", "unscored", "reviewers", box=None, pad_edge=False)
    for item in report:
        kappa = item.kappa_note if item.kappa is None else f"{item.kappa:.3f}"
        agreement = "-" if item.agreement is None else f"{item.agreement:.1%}"
        table.add_row(item.evaluator, str(item.pairs), agreement, kappa or "-", str(item.unscored),
                      for_terminal(", ".join(item.reviewers)))  # fmt: skip
    console.print(table)
    if not report:
        console.print("no judged evaluator in the results")
    if from_policy:
        note = f"{from_policy} label(s) made by a policy were left out: only people's labels count"
        console.print(note, highlight=False)
