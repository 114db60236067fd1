"""How ``assay artifacts list`` lays out manifests: readable at 80 columns, never truncating a name or hash.

Versions are grouped by the run that produced them (the run id heads its group instead of taking a column).
A table is used when every row fits the terminal; otherwise each version takes two lines, its name alone on
the first, so a long name is never cut and no cell wraps. The sha256 shows its first 12 hex digits unless
``wide`` asks for all 64 (``--json`` always has them all).
"""

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from assay.escaping import for_terminal
from assay.models.artifacts import ArtifactManifest

SHORT_SHA256 = 12


def _created(manifest: ArtifactManifest) -> str:
    return manifest.created_at.strftime("%Y-%m-%d %H:%M:%S")


def _sha256(manifest: ArtifactManifest, wide: bool) -> str:
    return manifest.sha256 if wide else manifest.sha256[:SHORT_SHA256]


def by_run(manifests: Sequence[ArtifactManifest]) -> dict[str, list[ArtifactManifest]]:
    """Manifests grouped by producing run id, in order of first appearance."""
    groups: dict[str, list[ArtifactManifest]] = {}
    for manifest in manifests:
        groups.setdefault(manifest.producer.run_id, []).append(manifest)
    return groups


def _table(manifests: Sequence[ArtifactManifest], wide: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("name", no_wrap=True)
    table.add_column("v", justify="right", no_wrap=True)
    table.add_column("bytes", justify="right", no_wrap=True)
    table.add_column("sha256", no_wrap=True)
    table.add_column("created (UTC)", no_wrap=True)
    for manifest in manifests:
        table.add_row(
            for_terminal(manifest.name),
            str(manifest.version),
            str(manifest.size),
            _sha256(manifest, wide),
            _created(manifest),
        )
    return table


def _stacked(console: Console, manifests: Sequence[ArtifactManifest], wide: bool) -> None:
    for manifest in manifests:
        console.print(f"[bold]{for_terminal(manifest.name)}[/]", highlight=False, soft_wrap=True)
        details = f"  v{manifest.version}  {manifest.size} bytes  {_created(manifest)} UTC"
        if wide:
            console.print(details, highlight=False)
            console.print(f"  sha256 {manifest.sha256}", highlight=False)
        else:
            console.print(f"{details}  sha256 {_sha256(manifest, wide)}", highlight=False)


def print_listing(console: Console, manifests: Sequence[ArtifactManifest], *, wide: bool, where: str) -> None:
    """Print the grouped listing and a count; see the module docstring for the layout."""
    groups = by_run(manifests)
    tables = {run: _table(group, wide) for run, group in groups.items()}
    unbounded = console.options.update_width(10**6)
    fits = all(console.measure(table, options=unbounded).maximum <= console.width for table in tables.values())
    for run, group in groups.items():
        heading = f"run {for_terminal(run)}" if run else "no run"
        console.print(f"[bold cyan]{heading}[/] ({len(group)} version(s))", highlight=False, soft_wrap=True)
        if fits:
            console.print(tables[run])
        else:
            _stacked(console, group, wide)
        console.print()
    console.print(f"{len(manifests)} artifact version(s) of {len(groups)} run(s)", highlight=False)
    console.print(f"store: {for_terminal(where)}", highlight=False, overflow="fold")
