"""``assay traces import``: a test lab from production traces (OpenTelemetry OTLP JSON with OpenInference
attributes, OpenInference span exports, MLflow traces)."""

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from assay.apps.cli.common import command_group, console, show_error, user_errors
from assay.escaping import for_terminal
from assay.models import traces as defaults

if TYPE_CHECKING:
    from assay.traces import TraceImportReport

app = command_group("Build test labs from production traces.")

MAX_LISTED = 10


@app.command("import")
def import_(
    sources: Annotated[
        list[str],
        typer.Argument(help="Trace files or folders (their .json/.jsonl files, recursively), or s3://BUCKET/PREFIX."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The test lab to write (JSON).")],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="otlp-json: OpenTelemetry OTLP JSON (the Collector's file exporter) with OpenInference or "
            "OpenTelemetry GenAI (gen_ai.*) attributes, GenAI events and log records beside; "
            "openinference: OpenInference span JSON (one span a line, as Phoenix exports); mlflow: MLflow trace "
            "JSON.",
        ),
    ] = defaults.TRACE_FORMAT,
    name: Annotated[str | None, typer.Option(help="The lab's name (default: traces-<first file>).")] = None,
    sample: Annotated[
        str | None,
        typer.Option(help="Import a sample: a number of traces (200), a fraction (0.1) or a percentage (10%)."),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the sample: the same files and seed give the same sample.")
    ] = defaults.SAMPLE_SEED,
    since: Annotated[
        str | None, typer.Option(help="Only requests that started at or after this time (ISO 8601; UTC if no zone).")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Only requests that started before this time (ISO 8601).")] = None,
    stratify_by: Annotated[
        Literal["route", "model", "service", "none"],
        typer.Option(help="Sample each route (root span name), model or service in proportion."),
    ] = defaults.STRATIFY_BY,
    route_from: Annotated[
        str,
        typer.Option(
            help="The route of a request (its case category, what --stratify-by route samples by): span-name (the "
            "root span's name; below a framework class such as RunnableSequence, the first span that is none) or "
            "attribute:NAME (the root span's attribute NAME, e.g. attribute:http.route; span-name where it is "
            "missing).",
        ),
    ] = defaults.ROUTE_FROM_SPAN_NAME,
    mask_pii: Annotated[
        bool,
        typer.Option(
            "--mask-pii/--keep-pii",
            help="Replace personal data (cards, SSNs, emails, phone numbers, IBANs) by [PII:kind] before the lab "
            "is written. Registered secrets and credentials (API keys, auth headers, tokens, private keys, "
            "passwords) are always masked.",
        ),
    ] = defaults.MASK_PII,
    max_trace_spans: Annotated[
        int,
        typer.Option(min=1, help="Leave out (and report) a trace of more spans: each trace is mapped in memory."),
    ] = defaults.MAX_TRACE_SPANS,
    max_trace_mb: Annotated[
        int,
        typer.Option(
            min=1,
            help="Leave out (and report) a trace whose spans take more MiB once read (the attributes a case is "
            "built from).",
        ),
    ] = defaults.MAX_TRACE_MIB,
    prices: Annotated[
        Path | None,
        typer.Option(
            help="A price table (JSON or TOML: model name or '*' -> input_per_1k, output_per_1k, "
            "cached_input_per_1k) for requests whose traces report no cost: priced from their input, cached "
            "input and output tokens, with cost_source price_table; the table is kept in the lab's models.",
        ),
    ] = None,
) -> None:
    """Build a test lab from exported traces: each request (a trace's root span) becomes a test case with the
    answer, retrieved documents, latency, tokens, cost, model and tool calls it recorded; requests of one
    session carry the conversation before them. The import report (what was read, left out and masked, and
    why) is printed and written beside the lab as <out>.import.json.

    Exit codes: 0 imported; 2 bad input (a file that cannot be read as the format, naming the file, line and
    span; a bad option) or no request became a test case (naming the most common reason); 1 unexpected error."""
    from assay.hosts.files import read_price_table
    from assay.traces import READERS, ImportOptions, SampleSize
    from assay.traces.files import import_to_file, report_path

    with user_errors():
        if format not in READERS:
            raise ValueError(f"--format {format!r}: expected one of {', '.join(READERS)}")
        options = ImportOptions(
            format=format,
            name=name,
            sample=SampleSize.parse(sample) if sample is not None else None,
            seed=seed,
            since=_moment(since, "--since"),
            until=_moment(until, "--until"),
            stratify_by=stratify_by,
            mask_pii=mask_pii,
            route_from=route_from,
            max_trace_spans=max_trace_spans,
            max_trace_bytes=max_trace_mb * 2**20,
            prices=read_price_table(prices) if prices is not None else {},
        )
        report = import_to_file(sources, options, out)
    _print(report)
    console.print(f"lab: {for_terminal(out)} (report: {for_terminal(report_path(out))})", highlight=False)
    if report.cases == 0:
        show_error(f"no test cases imported: {_why_empty(report)} (report: {report_path(out)})")
        raise typer.Exit(code=2)


def _why_empty(report: "TraceImportReport") -> str:
    """The most common reason requests were left out; else what the files lacked. An empty lab evaluates to
    "0/0 answered", which passes every gate, so it must not look like a successful import."""
    if report.left_out:
        most = max(report.left_out, key=lambda left: left.count)
        return f"the most common reason left out {most.count} of {report.traces} traces: {most.reason}"
    if report.spans == 0:
        return f"no spans were read from {len(report.files)} file(s); check that they are {report.format} exports"
    return f"none of the {report.spans} spans read is a request (a trace's root span)"


def _moment(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{option} {text!r}: expected an ISO 8601 time such as 2026-11-20 or "
                         "2026-11-20T08:00:00+00:00") from None  # fmt: skip
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _print(report: "TraceImportReport") -> None:
    kinds = ", ".join(f"{kind} {count}" for kind, count in report.spans_by_kind.items())
    console.print(f"read {report.spans} spans ({kinds}) in {report.traces} traces from {len(report.files)} file(s)",
                  highlight=False)  # fmt: skip
    console.print(f"imported {report.cases} requests as test cases ({report.cases_with_error} ended in error, "
                  f"{report.sessions} multi-turn sessions)", highlight=False)  # fmt: skip
    if report.conventions:
        read_with = ", ".join(f"{name} {count}" for name, count in sorted(report.conventions.items()))
        console.print(f"conventions read (cases): {read_with}", highlight=False)
    for stratum in report.strata:
        console.print(f"  sampled {stratum.sampled} of {stratum.traces} in {for_terminal(stratum.name)}",
                      highlight=False)  # fmt: skip
    for left in report.left_out:
        examples = ", ".join(left.examples[:3])
        console.print(f"left out {left.count}: {left.reason} (e.g. {examples})", highlight=False)
    if report.unmapped_spans:
        console.print(f"{report.unmapped_total} spans not mapped to any field:", highlight=False)
        for item in sorted(report.unmapped_spans, key=lambda item: -item.count)[:MAX_LISTED]:
            console.print(f"  {item.count} x {for_terminal(item.kind)} {for_terminal(item.name)}", highlight=False)
    if report.orphan_spans:
        console.print(f"{report.orphan_spans} spans have a parent in no file read", highlight=False)
    masked = ", ".join(f"{kind} {count}" for kind, count in report.masked.items()) or "nothing found"
    console.print(f"masked: {masked}" + ("" if report.pii_masked else " (personal data kept: --keep-pii)"),
                  highlight=False)  # fmt: skip
