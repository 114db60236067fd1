"""``assay report html|zip|csv RUN``: the reports people read, for a run folder or a run id."""

from pathlib import Path
from typing import Annotated

import typer

from assay.apps.cli.common import command_group, console, user_errors
from assay.atomic import write_atomic
from assay.escaping import for_terminal
from assay.jsonio import pretty_json

app = command_group("Render a run's HTML report, ZIP archive or CSV results.")

RunArgument = Annotated[str, typer.Argument(help="A run folder (e.g. the --out of assay evaluate) or a run id.")]
OutOption = Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of into the run folder.")]


def _load(reference: str):  # type: ignore[no-untyped-def]
    """The run's documents: its folder, or by run id its export folder or the artifact store."""
    from assay.artifacts.report.run_documents import load_run
    from assay.config import load_settings
    from assay.storage.factory import open_artifact_store, open_object_store
    from assay.storage.runs import RunStates

    if Path(reference).is_dir():
        return load_run(reference)
    if "/" in reference or "\\" in reference or Path(reference).exists():
        raise FileNotFoundError(f"{reference}: no such run folder")
    settings = load_settings()
    return load_run(reference, runs=RunStates(open_object_store(settings)), store=open_artifact_store(settings))


def _target(run, out: Path | None, default_name: str) -> Path:  # type: ignore[no-untyped-def]
    """``--out`` when given, else ``default_name`` in the run folder (the current folder for a run that
    only exists in the artifact store)."""
    if out is not None:
        return out
    folder = Path(run.source)
    return (folder if folder.is_dir() else Path.cwd()) / default_name


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text)


@app.command("html")
def html(run: RunArgument, out: OutOption = None) -> None:
    """Write the self-contained HTML report (and interpretation.json beside it); print its path."""
    from assay.artifacts.report.html import render_report

    with user_errors():
        documents = _load(run)
        page, interpretation = render_report(documents)
        path = _target(documents, out, "interpretation.html")
        _write_text(path, page)
        _write_text(path.with_suffix(".json"), pretty_json(interpretation))
    console.print(for_terminal(path), highlight=False, soft_wrap=True)


@app.command("zip")
def zip_(run: RunArgument, out: OutOption = None) -> None:
    """Write the ZIP archive in the manual's layout (report, interpretation.json, a folder per evaluator)."""
    from assay.artifacts.report.exports import write_zip
    from assay.artifacts.report.html import render_report

    with user_errors():
        documents = _load(run)
        page, interpretation = render_report(documents)
        path = write_zip(documents, page, interpretation, _target(documents, out, f"{documents.run_id or 'run'}.zip"))
    console.print(for_terminal(path), highlight=False, soft_wrap=True)


@app.command("csv")
def csv(run: RunArgument, out: OutOption = None) -> None:
    """Write the results as CSV: one row per case x model x metric (an unscored score is an empty cell)."""
    from assay.artifacts.report.exports import results_csv

    with user_errors():
        documents = _load(run)
        path = _target(documents, out, "results.csv")
        _write_text(path, results_csv(documents))
    console.print(for_terminal(path), highlight=False, soft_wrap=True)
