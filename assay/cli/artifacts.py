"""``assay artifacts list|get|verify``: what compliance staff use to retrieve and check artifacts."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from assay.cli.common import console, errors, user_errors
from assay.escaping import for_terminal

app = typer.Typer(help="List, retrieve and verify versioned artifacts.", no_args_is_help=True)


def _store():  # type: ignore[no-untyped-def]
    from assay.config import load_settings
    from assay.storage.factory import open_artifact_store

    return open_artifact_store(load_settings())


@app.command("list")
def list_(
    prefix: Annotated[str, typer.Argument(help="Only names starting with this.")] = "",
    all_versions: Annotated[bool, typer.Option("--all-versions", help="Every version, not just the latest.")] = False,
    run: Annotated[str | None, typer.Option("--run", help="Only versions produced by this run id.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List artifacts (latest version of each name unless --all-versions)."""
    with user_errors():
        store = _store()
        manifests = (
            [m for name in store.names(prefix) for m in store.versions(name)] if all_versions else store.list(prefix)
        )
    if run is not None:
        manifests = [manifest for manifest in manifests if manifest.producer.run_id == run]
    if as_json:
        console.print_json(json.dumps([m.model_dump(mode="json") for m in manifests]))
        return
    table = Table("name", "version", "size", "sha256", "created", "run")
    for manifest in manifests:
        table.add_row(
            for_terminal(manifest.name),
            str(manifest.version),
            str(manifest.size),
            manifest.sha256[:12],
            manifest.created_at.isoformat(timespec="seconds"),
            for_terminal(manifest.producer.run_id),
        )
    console.print(table)
    console.print(f"{len(manifests)} artifact version(s) in {for_terminal(store.store.describe())}", highlight=False)


@app.command("get")
def get(
    name: Annotated[str, typer.Argument(help="Artifact name, e.g. evaluations/NAME/summary.json.")],
    version: Annotated[int | None, typer.Option("--version", "-v", help="Version number; latest if omitted.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of standard output.")] = None,
) -> None:
    """Print or save one artifact version, refusing one that fails its hash or journal check."""
    with user_errors():
        manifest, data = _store().get(name, version)
    if out is None:
        sys.stdout.buffer.write(data)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    errors.print(
        f"{for_terminal(manifest.name)} v{manifest.version} ({manifest.size} bytes, sha256 {manifest.sha256})"
        f" -> {for_terminal(out)}",
        highlight=False,
        soft_wrap=True,
    )


@app.command("verify")
def verify(prefix: Annotated[str, typer.Argument(help="Only names starting with this.")] = "") -> None:
    """Check every version against its hash, its chain and the signed journal; exit 1 and list every problem
    when anything was tampered with. What could not be checked (no key, no journal) is said too."""
    with user_errors():
        report = _store().verify(prefix)
    for issue in report.issues:
        where = f" v{issue.version}" if issue.version else ""
        entry = f" (journal entry {issue.seq})" if issue.seq else ""
        errors.print(
            f"[red]{issue.problem}[/] {for_terminal(issue.name)}{where}{entry}: {for_terminal(issue.detail)}",
            highlight=False,
            soft_wrap=True,
        )
    for note in report.unchecked:
        errors.print(f"[yellow]not checked[/] {for_terminal(note)}", highlight=False, soft_wrap=True)
    status = "OK" if report.ok else f"{len(report.issues)} problem(s)"
    if report.ok and report.unchecked:
        status += f", but {len(report.unchecked)} kind(s) of tampering could not be checked (see above)"
    console.print(
        f"verified {report.checked} artifact version(s) and {report.journal_entries} journal entries: {status}"
    )
    if not report.ok:
        raise typer.Exit(code=1)
