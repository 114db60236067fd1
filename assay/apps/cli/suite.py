"""``assay suite import|export``: convert between Assay's JSON and other test-suite formats."""

from pathlib import Path
from typing import Annotated

import typer

from assay.apps.cli.common import command_group, console, user_errors
from assay.escaping import for_terminal

app = command_group("Import and export test suites and test labs.")

FORMAT_HELP = "eval-studio-suite | eval-studio-testlab | mlflow | ragas | assay"
IMPORT_FORMAT_HELP = f"auto (from the content) | {FORMAT_HELP} | mlflow-genai | deepeval | promptfoo"


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="File to import.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write Assay's JSON.")],
    format: Annotated[str, typer.Option("--format", "-f", help=IMPORT_FORMAT_HELP)] = "auto",
    model_key: Annotated[str, typer.Option(help="Model key for imported answers.")] = "imported",
    prompt_var: Annotated[
        str | None,
        typer.Option(
            help="The field holding the question when a record has several (promptfoo vars, MLflow 3 inputs); "
            "default: question, else the one of query, input or prompt, else the only field."
        ),
    ] = None,
) -> None:
    """Read PATH in a foreign format and write it as Assay's own JSON. The format read is printed (detected from
    the content unless --format names it), and so is everything the file held that Assay could not carry."""
    from assay.formats import export_file, read_file

    with user_errors():
        result = read_file(path, format, model_key=model_key, prompt_var=prompt_var)
        imported = result.content
        export_file(imported, out, "assay")
    how = "detected from the content" if result.detected else "as named"
    console.print(f"format: {result.format} ({how})", highlight=False)
    for note in result.notes:
        console.print(f"[yellow]not carried:[/] {for_terminal(note)}", highlight=False)
    kind = type(imported).__name__
    count = imported.case_count if hasattr(imported, "case_count") else len(imported.rows)
    units = "cases" if kind == "TestSuite" else "rows"
    console.print(
        f"imported {kind} {for_terminal(repr(imported.name))} ({count} {units}) -> {for_terminal(out)}", highlight=False
    )


@app.command("export")
def export(
    path: Annotated[Path, typer.Argument(help="Assay JSON (test suite or test lab) to export.")],
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    model_key: Annotated[
        str | None,
        typer.Option(help="The model whose answers to write, when a test lab holds several (mlflow, ragas)."),
    ] = None,
) -> None:
    """Write an Assay test suite or test lab in another format."""
    from assay.formats import export_file, import_file

    with user_errors():
        export_file(import_file(path, "assay"), out, format, model_key=model_key)
    console.print(f"exported {for_terminal(path)} as {for_terminal(format)} -> {for_terminal(out)}", highlight=False)
