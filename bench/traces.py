"""Memory and time of ``assay traces import`` on a 100,000-span OTLP JSON export, against a naive import.

A synthetic export is written first, as the OpenTelemetry Collector's file exporter writes one: JSON Lines,
one ``ExportTraceServiceRequest`` per batch of traces (hex ids, integer enums). Each trace is a RAG request of
five spans: a CHAIN root (question, answer, session), a RETRIEVER with three documents, an LLM call (the
request and response JSON the OpenAI instrumentation records, messages, tokens, cost, invocation
parameters), a TOOL call and an EMBEDDING; texts are distinct, 200-800 characters.

Then, each in a fresh process so one cannot leave memory or warm caches to the other:

- baseline: ``json.loads`` of every line into one list, the whole parsed export held at once (what a naive
  importer does before it maps anything);
- import: `assay.traces.import_traces` on the same file (read, map, sessions, masking, the lab in memory).

Each is run twice: once for its time and peak RSS growth (maximum resident size less the size after imports),
once under ``tracemalloc`` for its peak of Python allocations. Printed: both, the ratios import / baseline, and
the import's spans per second.

Goal: the import's peak memory stays below the naive baseline's (tracemalloc peak ratio < 1.0), so an export
that can be loaded at all can be imported. Exits 1 when it does not. Times are printed as ratios to the
baseline measured in the same run, not judged.

Run: .venv/bin/python bench/traces.py [--traces 20000] [--per-line 50] [--keep FOLDER]
"""

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPANS_PER_TRACE = 5
WORDS = ["account", "balance", "transfer", "fee", "interest", "rate", "card", "payment", "statement", "overdraft",
         "limit", "branch", "mortgage", "savings", "deposit", "withdrawal", "notice", "period", "customer", "policy",
         "refund", "charge", "currency", "exchange", "loan", "term", "repayment", "eligibility", "credit", "check",
         "application", "online", "security", "code", "verification", "holder", "joint", "business", "personal",
         "monthly", "annual", "variable", "fixed", "bonus", "cashback", "reward", "travel", "insurance", "cover",
         "claim", "excess", "premium", "renewal", "cancellation", "complaint", "ombudsman"]  # fmt: skip
ROUTES = ("faq", "billing", "complaints", "loans", "cards")


def text(rng: random.Random, low: int, high: int, serial: int) -> str:
    """Distinct prose of ``low``-``high`` characters."""
    size = rng.randint(low, high)
    words = [f"#{serial}"]
    length = len(words[0])
    while length < size:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def attribute(key: str, value: object) -> dict:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def span(trace: str, number: int, parent: str | None, name: str, kind: str, start: int, end: int, **attrs) -> dict:
    raw = {
        "traceId": trace, "spanId": f"{number:016x}", "name": name, "kind": 1,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
        "attributes": [attribute("openinference.span.kind", kind)]
        + [attribute(key, value) for key, value in attrs.items()],
        "status": {}, "flags": 256,
    }  # fmt: skip
    if parent:
        raw["parentSpanId"] = parent
    return raw


def trace_spans(rng: random.Random, index: int, start: int) -> list[dict]:
    trace = f"{index + 1:032x}"
    root = f"{index * SPANS_PER_TRACE + 1:016x}"
    serial = index * 10
    question = text(rng, 200, 400, serial)
    answer = text(rng, 300, 800, serial + 1)
    documents = [text(rng, 400, 800, serial + 2 + n) for n in range(3)]
    system = "Answer from the context only. Context:\n" + "\n".join(documents)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    request = json.dumps({"model": "gpt-4o-mini", "messages": messages, "temperature": 0})
    response = json.dumps({"id": f"chatcmpl-{index}", "object": "chat.completion", "model": "gpt-4o-mini",
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}],
                           "usage": {"prompt_tokens": 900, "completion_tokens": 120}})  # fmt: skip
    retrieved = {}
    for n, document in enumerate(documents):
        prefix = f"retrieval.documents.{n}.document."
        retrieved |= {f"{prefix}id": f"kb/{index % 500}/{n}.md", f"{prefix}content": document,
                      f"{prefix}score": round(0.9 - 0.1 * n, 3), f"{prefix}metadata": '{"source": "kb"}'}  # fmt: skip
    number = index * SPANS_PER_TRACE + 1
    ms = 1_000_000
    return [
        span(trace, number, None, ROUTES[index % len(ROUTES)], "CHAIN", start, start + 2400 * ms,
             **{"input.value": question, "output.value": answer, "session.id": f"session-{index // 3}",
                "metadata": '{"user_tier": "gold"}'}),
        span(trace, number + 1, root, "embed", "EMBEDDING", start + 5 * ms, start + 40 * ms,
             **{"embedding.model_name": "text-embedding-3-small", "embedding.embeddings.0.embedding.text": question}),
        span(trace, number + 2, root, "retrieve", "RETRIEVER", start + 50 * ms, start + 200 * ms,
             **{"input.value": question, **retrieved}),
        span(trace, number + 3, root, "ChatCompletion", "LLM", start + 250 * ms, start + 2200 * ms,
             **{"llm.system": "openai", "llm.model_name": "gpt-4o-mini", "input.value": request,
                "input.mime_type": "application/json", "output.value": response, "output.mime_type": "application/json",
                "llm.invocation_parameters": '{"model": "gpt-4o-mini", "temperature": 0}',
                "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": system,
                "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": question,
                "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": answer,
                "llm.token_count.prompt": 900, "llm.token_count.completion": 120, "llm.token_count.total": 1020,
                "llm.cost.total": 0.00021}),
        span(trace, number + 4, root, "lookup_account", "TOOL", start + 2210 * ms, start + 2390 * ms,
             **{"tool.name": "lookup_account", "input.value": json.dumps({"account": f"A-{index}"}),
                "output.value": json.dumps({"balance": index % 997, "note": text(rng, 200, 300, serial + 6)})}),
    ]  # fmt: skip


def write_export(path: Path, traces: int, per_line: int) -> int:
    """The export, one batch of ``per_line`` traces a line; returns its size in bytes."""
    rng = random.Random(20260528)
    resource_attributes = [attribute("service.name", "rag-app"), attribute("telemetry.sdk.language", "python")]
    start = 1_780_000_000 * 10**9
    with path.open("w", encoding="utf-8") as file:
        for first in range(0, traces, per_line):
            spans = [
                item
                for index in range(first, min(first + per_line, traces))
                for item in trace_spans(rng, index, start + index * 3 * 10**9)
            ]
            batch = {"resourceSpans": [{"resource": {"attributes": resource_attributes},
                                        "scopeSpans": [{"scope": {"name": "rag"}, "spans": spans}]}]}  # fmt: skip
            file.write(json.dumps(batch) + "\n")
    return path.stat().st_size


def baseline(path: Path) -> int:
    with path.open("rb") as file:
        parsed = [json.loads(line) for line in file]
    return len(parsed)


def assay_import(path: Path) -> int:
    from assay.traces import ImportOptions, import_traces

    lab, report = import_traces([path], ImportOptions())
    return report.spans if lab.rows else 0


def measure(mode: str, path: Path, trace_memory: bool) -> dict:
    """Run in a child process: one mode's time, peak RSS growth and (when tracing) tracemalloc peak."""
    import assay.traces  # noqa: F401  (imported before the measurement in both modes)

    rss_before = _rss_mib()
    if trace_memory:
        tracemalloc.start()
    started = time.perf_counter()
    count = {"baseline": baseline, "import": assay_import}[mode](path)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if trace_memory else None
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": elapsed, "tracemalloc_mib": peak, "rss_growth_mib": peak_rss - rss_before, "count": count}


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def child(mode: str, path: Path, trace_memory: bool) -> dict:
    command = [sys.executable, __file__, "--child", mode, "--file", str(path)]
    command += ["--trace-memory"] if trace_memory else []
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if result.returncode:
        sys.exit(f"{mode} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=int, default=20_000, help="traces of 5 spans each")
    parser.add_argument("--per-line", type=int, default=50, help="traces per exported batch (line)")
    parser.add_argument("--keep", type=Path, help="write the export into this folder and keep it")
    parser.add_argument("--child", choices=["baseline", "import"], help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace-memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.file, args.trace_memory)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "export.jsonl"
        size = write_export(path, args.traces, args.per_line)
        spans = args.traces * SPANS_PER_TRACE
        print(f"export: {spans:,} spans in {args.traces:,} traces, {size / 2**20:.0f} MiB, "
              f"{args.per_line} traces a line")  # fmt: skip
        results = {mode: (child(mode, path, False), child(mode, path, True)) for mode in ("baseline", "import")}
    (base, base_traced), (run, run_traced) = results["baseline"], results["import"]
    if run["count"] != spans:
        sys.exit(f"the import read {run['count']} spans, expected {spans}")
    print(f"{'':>9} {'seconds':>8} {'RSS growth MiB':>15} {'tracemalloc peak MiB':>21}")
    for name, (timed, traced) in (("baseline", (base, base_traced)), ("import", (run, run_traced))):
        print(f"{name:>9} {timed['seconds']:>8.2f} {timed['rss_growth_mib']:>15.0f} {traced['tracemalloc_mib']:>21.0f}")
    memory_ratio = run_traced["tracemalloc_mib"] / base_traced["tracemalloc_mib"]
    rss_ratio, time_ratio = run["rss_growth_mib"] / base["rss_growth_mib"], run["seconds"] / base["seconds"]
    print(f"import / baseline: peak memory {memory_ratio:.2f} (tracemalloc), {rss_ratio:.2f} (RSS growth); "
          f"time {time_ratio:.2f}")  # fmt: skip
    print(f"import: {spans / run['seconds']:,.0f} spans/s, {run['seconds'] * 100_000 / spans:.1f} s per 100k spans")
    if memory_ratio >= 1.0:
        print(f"GOAL MISSED: the import's peak memory is {memory_ratio:.2f}x the naive baseline's (goal < 1.0)")
        sys.exit(1)
    print("goal met: the import's peak memory is below the naive baseline's")


if __name__ == "__main__":
    main()
