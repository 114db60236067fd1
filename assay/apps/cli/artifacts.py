"""``assay artifacts list|get|verify|bundle``: what compliance staff use to retrieve and check artifacts."""

import hashlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from assay.apps.cli.artifact_listing import print_listing
from assay.apps.cli.common import command_group, console, errors, user_errors
from assay.atomic import write_atomic
from assay.escaping import for_terminal
from assay.models.artifacts import VerificationReport
from assay.storage.run_artifacts import run_versions

UNVERIFIED_EXIT = 3
"""``verify --bundle`` without the signing key: nothing found wrong, but the signatures were not checked."""

app = command_group("List, retrieve and verify versioned artifacts.")


def _store():  # type: ignore[no-untyped-def]
    from assay.config import load_settings
    from assay.storage.factory import open_artifact_store

    return open_artifact_store(load_settings())


@app.command("list")
def list_(
    prefix: Annotated[str, typer.Argument(help="Only names starting with this.")] = "",
    all_versions: Annotated[bool, typer.Option("--all-versions", help="Every version, not just the latest.")] = False,
    run: Annotated[
        str | None, typer.Option("--run", help="Every version this run id produced (its decisions included).")
    ] = None,
    wide: Annotated[bool, typer.Option("--wide", help="The full sha256 instead of its first 12 digits.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output (always the full sha256).")] = False,
) -> None:
    """List artifacts grouped by run (latest version of each name unless --all-versions or --run)."""
    with user_errors():
        store = _store()
        if run is not None:
            manifests = run_versions(store, run, prefix)
        elif all_versions:
            manifests = [manifest for name in store.names(prefix) for manifest in store.versions(name)]
        else:
            manifests = store.list(prefix)
    if as_json:
        typer.echo(json.dumps([manifest.model_dump(mode="json") for manifest in manifests], indent=2))
        return
    print_listing(console, manifests, wide=wide, where=store.store.describe())


@app.command("get")
def get(
    name: Annotated[str, typer.Argument(help="Artifact name, e.g. evaluations/NAME/summary.json.")],
    version: Annotated[int | None, typer.Option("--version", "-v", help="Version number; latest if omitted.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of standard output.")] = None,
) -> None:
    """Print or save one artifact version, refusing one that fails its hash or journal check, a symbolic
    link or special file in its place, and a latest version older than the journal's newest (rolled back)."""
    with user_errors():
        manifest, data = _store().get(name, version)
    if out is None:
        sys.stdout.buffer.write(data)
        return
    write_atomic(out, data)
    errors.print(
        f"{for_terminal(manifest.name)} v{manifest.version} ({manifest.size} bytes, sha256 {manifest.sha256})"
        f" -> {for_terminal(out)}",
        highlight=False,
        soft_wrap=True,
    )


@app.command("verify")
def verify(
    prefix: Annotated[str, typer.Argument(help="Only names starting with this.")] = "",
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="Re-verify this run bundle offline instead of the store.")
    ] = None,
    no_signatures: Annotated[
        bool,
        typer.Option(
            "--no-signatures",
            help="With --bundle: accept a check without the signing key (hashes only); otherwise that exits 3.",
        ),
    ] = False,
) -> None:
    """Check every version against its hash, its chain and the signed journal, or a run bundle offline.

    Anything else in the store is reported too, never followed or read: symbolic links, FIFOs and devices,
    S3 directory markers, objects outside the layout, and run states whose signature no longer matches.

    Exit 1 and list every problem when anything was tampered with; what could not be checked (no key, no
    journal) is said too. With --bundle, a zip made by 'assay artifacts bundle' is checked with only its
    bytes and the signing key, and each edited, missing or added member is named. Without the key a bundle
    rewritten with matching hashes cannot be told from the original: that check exits 3 unless --no-signatures
    says the reader accepts hashes alone."""
    with user_errors():
        if bundle is not None and prefix:
            raise ValueError(f"give a PREFIX or --bundle, not both (got {prefix!r} and {bundle})")
        if bundle is None:
            report = _store().verify(prefix)
        else:
            from assay.config import load_settings
            from assay.storage.bundles import verify_bundle
            from assay.storage.factory import open_signer

            report = verify_bundle(bundle, open_signer(load_settings()))
    _print_report(report)
    what = "member(s) of the bundle" if bundle is not None else "artifact version(s)"
    status = "OK" if report.ok else f"{len(report.issues)} problem(s)"
    if report.ok and report.unchecked:
        status += f", but {len(report.unchecked)} kind(s) of tampering could not be checked (see above)"
    console.print(f"verified {report.checked} {what} and {report.journal_entries} journal entries: {status}")
    if not report.ok:
        raise typer.Exit(code=1)
    if bundle is not None and not report.signatures_checked and not no_signatures:
        errors.print(
            "[red]signatures not verified[/]: put the signing key where ASSAY_HOME points, or pass "
            "--no-signatures to accept a check of the hashes alone",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(code=UNVERIFIED_EXIT)


def _print_report(report: VerificationReport) -> None:
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


@app.command("bundle")
def bundle(
    run: Annotated[str, typer.Argument(help="The run id.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The zip to write, e.g. run.zip.")],
) -> None:
    """Write one run's evidence to a zip and print its sha256.

    The zip holds every artifact version the run produced with its manifest (its decisions included), its
    state, the journal entries of those versions and a signed verification record. Keep the printed sha256
    with the bundle. Exit 1 when a version failed its checks (the record says which)."""
    from assay.storage.bundles import build_bundle

    with user_errors():
        data, record = build_bundle(_store(), run)
        write_atomic(out, data)
    failed = [check for check in record.versions if not check.ok]
    for check in failed:
        errors.print(
            f"[red]failed[/] {for_terminal(check.name)} v{check.version}: content matches manifest "
            f"{check.content_matches_manifest}, manifest matches journal {check.manifest_matches_journal}, "
            f"signature {check.signature}",
            highlight=False,
            soft_wrap=True,
        )
    decisions = sum(check.kind == "decision" for check in record.versions)
    console.print(
        f"{len(record.versions)} artifact version(s) of run {for_terminal(run)} ({decisions} decision(s)), "
        f"{sum(check.journal_entry is not None for check in record.versions)} journal entries, "
        f"{len(record.members) + 1} member(s)",
        highlight=False,
    )
    console.print(f"sha256 {hashlib.sha256(data).hexdigest()}  {for_terminal(out)}", highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(code=1)
