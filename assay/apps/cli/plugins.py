"""How the catalogue listings (``assay evaluators list``, ``perturbators list``, ``hosts list``, ``judges
templates``) show where each plugin comes from and which installed plugins could not be used.

One shape for every kind: in ``--json`` each entry gains ``available`` and ``origin`` (package, version, entry
point), and a plugin that failed to import or to register is an entry of its own with ``available: false``,
the ``error`` and the id ``package/name`` (so it never shadows a registered id, even one it tried to take); a
table gains a package column and ends with one line per unavailable plugin. A broken plugin never fails the
listing (exit 0): the listing is where its author finds out why."""

from collections.abc import Sequence
from typing import Any

from assay.apps.cli.common import console
from assay.escaping import for_terminal
from assay.models.plugins import PluginOrigin, UnavailablePlugin


def listed(entry: dict[str, Any], origin: PluginOrigin) -> dict[str, Any]:
    """A registered plugin's ``--json`` entry: its metadata, available, and where it comes from."""
    return {**entry, "available": True, "origin": origin.model_dump(mode="json")}


def listed_unavailable(plugins: Sequence[UnavailablePlugin]) -> list[dict[str, Any]]:
    """The ``--json`` entries of plugins that could not be registered."""
    return [
        {
            "id": plugin.qualified_id,
            "available": False,
            "origin": plugin.origin.model_dump(mode="json"),
            "error": plugin.error,
        }
        for plugin in plugins
    ]


def print_unavailable(plugins: Sequence[UnavailablePlugin]) -> None:
    """One line per plugin that could not be registered, after the table."""
    for plugin in plugins:
        console.print(
            f"[yellow]unavailable[/] {for_terminal(plugin.kind)} {for_terminal(plugin.qualified_id)} "
            f"({for_terminal(plugin.origin.label)}, entry point {for_terminal(plugin.origin.entry_point)}): "
            f"{for_terminal(plugin.error)}",
            highlight=False,
            soft_wrap=True,
        )
