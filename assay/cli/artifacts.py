"""``assay artifacts list|get|verify``: what compliance staff use to retrieve and check artifacts."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from assay.cli.common import console, errors, user_errors

app = typer.Typer(help="List, retrieve and verify versioned artifacts.", no_args_is_help=True)


def _store():  # type: ignore[no-untyped-def]
    from assay.config import load_settings
    from assay.storage.artifacts import ArtifactStore
    from assay.storage.factory import open_object_store

    return ArtifactStore(open_object_store(load_settings()))


@app.command("list")
def list_(
    prefix: Annotated[str, typer.Argument(help="Only names starting with this.")] = "",
    all_versions: Annotated[bool, typer.Option("--all-versions", help="Every version, not just the latest.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List artifacts (latest version of each name unless --all-versions)."""
    with user_errors():
        store = _store()
        manifests = (
            [m for name in store.names(prefix) for m in store.versions(name)] if all_versions else store.list(prefix)
        )
    if as_json:
        console.print_json(json.dumps([m.model_dump(mode="json") for m in manifests]))
        return
    table = Table("name", "version", "size", "sha256", "created", "run")
    for manifest in manifests:
        table.add_row(
            manifest.name,
            str(manifest.version),
            str(manifest.size),
            manifest.sha256[:12],
            manifest.created_at.isoformat(timespec="seconds"),
            manifest.producer.run_id,
        )
    console.print(table)
    console.print(f"{len(manifests)} artifact version(s) in {store.store.describe()}")


@app.command("get")
def get(
    name: Annotated[str, typer.Argument(help="Artifact name, e.g. evaluations/NAME/summary.json.")],
    version: Annotated[int | None, typer.Option("--version", "-v", help="Version number; latest if omitted.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of standard output.")] = None,
) -> None:
    """Print or save one artifact version."""
    with user_errors():
        manifest, data = _store().get(name, version)
    if out is None:
        sys.stdout.buffer.write(data)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    errors.print(f"{manifest.name} v{manifest.version} ({manifest.size} bytes, sha256 {manifest.sha256[:12]}) -> {out}")


@app.command("verify")
def verify(prefix: Annotated[str, typer.Argument(help="Only names starting with this.")] = "") -> None:
    """Recompute every version's hash; exit 1 and list the problems when anything was tampered with."""
    with user_errors():
        report = _store().verify(prefix)
    for issue in report.issues:
        errors.print(f"[red]{issue.problem}[/] {issue.name} v{issue.version}: {issue.detail}", highlight=False)
    status = "OK" if report.ok else f"{len(report.issues)} problem(s)"
    console.print(f"verified {report.checked} artifact version(s): {status}")
    if not report.ok:
        raise typer.Exit(code=1)
