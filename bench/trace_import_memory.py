"""Peak memory of ``assay traces import`` on an export of many small spans (issue 35: 2,000,000 spans in under
1 GiB of resident memory, where holding every span until the files are read took about 3 KB a span).

A synthetic OTLP JSON export is written first, as the OpenTelemetry Collector's file exporter writes one: JSON
Lines, one ``ExportTraceServiceRequest`` of 1,000 spans a line, in files of 100,000 spans (the exporter
rotates its files; one file of 2,000,000 spans would also pass the 512 MiB an input file may be). Each trace
is ten spans: a CHAIN root with the question and answer (``input.value``/``output.value``), a RETRIEVER child
with one document and eight CHAIN steps; trace ids are random hex, as real ones are.

Then ``assay traces import FOLDER --out LAB --sample 1000`` runs as a user runs it, in a child process with
its own ``TMPDIR`` (where the spans are spilled). The sample keeps the lab to 1,000 rows: without it the lab
holds a row per trace (200,000 here), and that lab, not the spans, is what the memory then holds
(``--sample all`` measures that). Printed: the child's peak RSS (``ru_maxrss``), wall time, spans per second,
the spill's peak size on disk, and the verdict against 1 GiB. Exits 1 on a failed verdict or a report that
does not count every span and trace.

Run: .venv/bin/python bench/trace_import_memory.py [--spans 2000000] [--sample 1000|all] [--keep FOLDER]
"""

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
ASSAY = ROOT / ".venv" / "bin" / "assay"
SPANS_PER_TRACE = 10
SPANS_PER_LINE = 1_000
SPANS_PER_FILE = 100_000
LIMIT_MIB = 1024
ROUTES = ("faq", "billing", "complaints", "loans", "cards")
START_NS = 1_780_000_000 * 10**9


def attribute(key: str, value: str) -> dict:
    return {"key": key, "value": {"stringValue": value}}


def span(trace: str, number: int, parent: str | None, name: str, kind: str, start: int, attributes: list) -> dict:
    raw = {
        "traceId": trace, "spanId": f"{number:016x}", "name": name, "kind": 1, "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 5_000_000), "attributes": [attribute("openinference.span.kind", kind),
                                                                    *attributes], "status": {},
    }  # fmt: skip
    if parent:
        raw["parentSpanId"] = parent
    return raw


def trace_spans(index: int, trace: str) -> list[dict]:
    """One request of `SPANS_PER_TRACE` spans, a second after the one before."""
    start = START_NS + index * 10**9
    first = index * SPANS_PER_TRACE + 1
    root = f"{first:016x}"
    question = f"What is the fee for request {index}?"
    spans = [
        span(trace, first, None, ROUTES[index % len(ROUTES)], "CHAIN", start,
             [attribute("input.value", question), attribute("output.value", f"The fee is {index % 97} EUR.")]),
        span(trace, first + 1, root, "retrieve", "RETRIEVER", start + 1000,
             [attribute("retrieval.documents.0.document.id", f"kb/{index % 500}.md"),
              attribute("retrieval.documents.0.document.content", f"Fees: {index % 97} EUR a month.")]),
    ]  # fmt: skip
    steps = range(2, SPANS_PER_TRACE)
    return spans + [span(trace, first + n, root, f"step-{n}", "CHAIN", start + 2000 * n, []) for n in steps]


def write_export(folder: Path, total: int) -> int:
    """``total`` spans (whole traces) in JSON Lines files under ``folder``; returns their size in bytes."""
    rng = random.Random(20260528)
    resource_spans = {"resource": {"attributes": [attribute("service.name", "rag-app")]}}
    traces = total // SPANS_PER_TRACE
    per_line = SPANS_PER_LINE // SPANS_PER_TRACE
    per_file = SPANS_PER_FILE // SPANS_PER_TRACE
    size = 0
    for first_of_file in range(0, traces, per_file):
        path = folder / f"traces-{first_of_file // per_file:04d}.jsonl"
        with path.open("wb") as file:
            for first in range(first_of_file, min(first_of_file + per_file, traces), per_line):
                spans = [item for index in range(first, min(first + per_line, traces))
                         for item in trace_spans(index, f"{rng.getrandbits(128):032x}")]  # fmt: skip
                scope = {"scope": {"name": "rag"}, "spans": spans}
                file.write(orjson.dumps({"resourceSpans": [{**resource_spans, "scopeSpans": [scope]}]}) + b"\n")
        size += path.stat().st_size
    return size


def folder_size(folder: Path) -> int:
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(FileNotFoundError):  # removed while counted
                total += (Path(parent) / name).stat().st_size
    return total


def run_import(export: Path, out: Path, scratch: Path, sample: str) -> tuple[float, float, int, str]:
    """The import in a child process: (peak RSS in MiB, seconds, peak spill size in bytes, its output)."""
    command = [str(ASSAY), "traces", "import", str(export), "--out", str(out)]
    command += [] if sample == "all" else ["--sample", sample]
    peak_disk = [0]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env={**os.environ, "TMPDIR": str(scratch)}, cwd=ROOT)  # fmt: skip
    watcher = threading.Thread(target=_watch, args=(child, scratch, peak_disk), daemon=True)
    watcher.start()
    output, _ = child.communicate()
    elapsed = time.perf_counter() - started
    watcher.join()
    if child.returncode:
        sys.exit(f"the import failed ({child.returncode}):\n{output}")
    peak_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return peak_rss, elapsed, peak_disk[0], output


def _watch(child: subprocess.Popen, scratch: Path, peak: list[int]) -> None:
    while child.poll() is None:
        peak[0] = max(peak[0], folder_size(scratch))
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=2_000_000, help="spans in the export (10 a trace)")
    parser.add_argument("--sample", default="1000", help="--sample of the import, or 'all' for every trace")
    parser.add_argument("--keep", type=Path, help="write the export into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        base = Path(temporary)
        export = args.keep or base / "export"
        export.mkdir(parents=True, exist_ok=True)
        scratch = base / "tmp"
        scratch.mkdir()
        started = time.perf_counter()
        size = write_export(export, args.spans)
        print(f"export: {args.spans} spans, {size / 2**20:.0f} MiB in {len(list(export.glob('*.jsonl')))} "
              f"files, written in {time.perf_counter() - started:.0f} s")  # fmt: skip
        peak_rss, elapsed, disk, output = run_import(export, base / "lab.json", scratch, args.sample)
        report = json.loads((base / "lab.import.json").read_text())
    traces = args.spans // SPANS_PER_TRACE
    complete = report["spans"] == args.spans and report["traces"] == traces
    verdict = peak_rss < LIMIT_MIB and complete
    print(output.strip())
    print(f"import (--sample {args.sample}): peak RSS {peak_rss:.0f} MiB, {elapsed:.0f} s "
          f"({args.spans / elapsed:,.0f} spans/s), spill on disk at most {disk / 2**20:.0f} MiB")  # fmt: skip
    print(f"report: {report['spans']} spans, {report['traces']} traces, {report['cases']} cases"
          + ("" if complete else f" (expected {args.spans} spans and {traces} traces)"))  # fmt: skip
    print(f"{'PASS' if verdict else 'FAIL'}: peak RSS {peak_rss:.0f} MiB against {LIMIT_MIB} MiB")
    sys.exit(0 if verdict else 1)


if __name__ == "__main__":
    main()
