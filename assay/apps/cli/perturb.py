"""``assay perturb`` and ``assay perturbators list``: robustness variants of a test suite (seed 002)."""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from assay.apps.cli.common import command_group, console, user_errors
from assay.apps.cli.plugins import listed, listed_unavailable, print_unavailable
from assay.escaping import for_terminal

perturbators_app = command_group("The perturbator catalogue.")


def perturb(
    suite: Annotated[Path, typer.Argument(help="Test suite in Assay's JSON.")],
    perturbator: Annotated[str, typer.Option("--perturbator", "-p", help="Perturbator id, see 'perturbators list'.")],
    intensity: Annotated[str, typer.Option("--intensity", "-i", help="low | medium | high")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the perturbed suite (Assay JSON).")],
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same perturbations.")] = 0,
    key: Annotated[
        list[str] | None, typer.Option("--key", "-k", help="Perturb only this test case key; repeatable.")
    ] = None,
) -> None:
    """Add a perturbed twin of each test case (linked to its original) and write the new suite to OUT."""
    from assay.formats import export_file, import_file
    from assay.models import TestSuite
    from assay.perturbators import get_perturbator
    from assay.perturbators.suite import UNCHANGED, perturb_suite

    with user_errors():
        original = import_file(suite, "assay")
        if not isinstance(original, TestSuite):
            raise ValueError(f"{suite}: expected a test suite, got a {type(original).__name__}")
        perturbator = get_perturbator(perturbator).id  # the canonical id, e.g. 'random_OCR' -> 'random_ocr'
        perturbed = perturb_suite(original, perturbator, intensity, seed=seed, keys=key)
        export_file(perturbed, out, "assay")
    added = [case for _, case in perturbed.cases() if case.key not in {c.key for _, c in original.cases()}]
    unchanged = sum(UNCHANGED in case.categories for case in added)
    note = f", {unchanged} left unchanged" if unchanged else ""
    how = f"{for_terminal(perturbator)}, {for_terminal(intensity)}, seed {seed}{note}"
    console.print(f"added {len(added)} perturbed cases ({how}) -> {for_terminal(out)}", highlight=False)


@perturbators_app.command("list")
def list_perturbators(
    as_json: Annotated[bool, typer.Option("--json", help="Full metadata as JSON.")] = False,
) -> None:
    """List every registered perturbator with its kind, what low / medium / high mean and its package, and the
    installed plugins that could not be loaded with the reason."""
    from assay.perturbators import get_perturbator, perturbator_ids
    from assay.perturbators.registry import perturbator_origin, unavailable_perturbators

    ids = perturbator_ids()
    described = [
        (get_perturbator(perturbator_id).describe(), perturbator_origin(perturbator_id)) for perturbator_id in ids
    ]
    if as_json:
        entries = [listed(item, origin) for item, origin in described]
        console.print_json(json.dumps(entries + listed_unavailable(unavailable_perturbators())))
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("low / medium / high")
    table.add_column("package", no_wrap=True, min_width=8)
    for item, origin in described:
        levels = " / ".join(f"{amount:g}" for amount in item["amounts"].values())
        table.add_row(
            for_terminal(item["id"]),
            for_terminal(item["kind"]),
            for_terminal(f"{levels} ({item['amount_unit']})"),
            for_terminal(origin.package),
        )
    console.print(table)
    print_unavailable(unavailable_perturbators())
