"""What a browser sees from the Prefect server under write load: plain ``prefect server start`` against Assay's
``python -m assay.apps.prefect_serve`` (Prefect's app behind ``RetryWhenLocked``), measured in the same run.

Prefect's SQLite server answers 503 when a transaction hits "database is locked"; its Python client retries,
the browser UI does not, so a reviewer's Submit on a pause form can fail while an evaluation writes. For each
server (plain first, then Assay's; each with a fresh PREFECT_HOME in a temporary folder, stopped afterwards):

- setup: a flow and some flow runs, over plain HTTP; every kind of request below is sent once without
  contention and must answer 2xx (otherwise the payloads are wrong and the server is skipped);
- writers (``--writers`` threads, default 8) for ``--seconds`` (default 40): each repeatedly POSTs a batch of
  logs, creates a task run and moves it Running -> Completed, and creates an artifact;
- reviewer: one request every ~0.2 s, what a person's form submit causes: a flow run input under a unique key
  (POST /flow_runs/{id}/input), the run paused (set_state PAUSED, forced: the flow's side) and resumed
  (POST /flow_runs/{id}/resume with run_input: the pause form's Submit);
- every request is one httpx call with NO retries (a browser's fetch): outcomes counted by status code,
  timeouts (``--timeout``, default 30 s) and connection errors apart.

Printed per server: reviewer requests, 503s and any non-2xx, p50/p95 latency; writers' requests and 503s; then
the ratio of reviewer failures Assay/plain, against the baseline measured in the same run. Exits 0 always.

Run: .venv/bin/python bench/prefect_locks.py [--seconds 40] [--writers 8]
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
STARTUP_TIMEOUT_S = 120.0
REVIEW_PERIOD_S = 0.2
LOGS_PER_BATCH = 50


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _now(offset_s: float = 0.0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=offset_s)).isoformat()


@contextmanager
def running_server(kind: str, home: Path) -> Iterator[str]:
    """Yield the API URL of a fresh server (``plain`` or ``assay``) whose state is all under ``home``."""
    port = _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_UI_API_URL": api_url,
    }
    env.pop("PREFECT_API_URL", None)
    if kind == "plain":
        command = [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    else:
        command = [sys.executable, "-m", "assay.apps.prefect_serve", "--host", "127.0.0.1", "--port", str(port)]
    log_path = home / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed in finally
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{api_url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{kind} Prefect server did not become healthy on {api_url}; log tail:\n{tail}")
            time.sleep(0.5)
        yield api_url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


@dataclass
class Tally:
    """Outcomes of one actor's requests: status codes (or 'timeout'/'error') and latencies of answered ones."""

    outcomes: Counter = field(default_factory=Counter)
    by_kind: dict[str, Counter] = field(default_factory=dict)
    latencies_s: list[float] = field(default_factory=list)
    first_timeout_at: float | None = None  # time.monotonic() when the first timed-out request was sent
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, outcome: int | str, latency_s: float) -> None:
        with self.lock:
            if outcome == "timeout" and self.first_timeout_at is None:
                self.first_timeout_at = time.monotonic() - latency_s
            self.outcomes[outcome] += 1
            self.by_kind.setdefault(kind, Counter())[outcome] += 1
            self.latencies_s.append(latency_s)

    @property
    def requests(self) -> int:
        return sum(self.outcomes.values())

    @property
    def status_503(self) -> int:
        return self.outcomes[503]

    @property
    def failures(self) -> int:
        return sum(n for outcome, n in self.outcomes.items() if not (isinstance(outcome, int) and outcome < 300))

    def percentile(self, q: float) -> float:
        if not self.latencies_s:
            return float("nan")
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Api:
    """Plain HTTP calls (no retries) that record their outcome in a tally."""

    def __init__(self, api_url: str, timeout_s: float) -> None:
        self.client = httpx.Client(base_url=api_url, timeout=timeout_s)  # httpx retries nothing by default

    def post(self, tally: Tally | None, kind: str, path: str, body: object) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = self.client.post(path, json=body)
        except httpx.TimeoutException:
            outcome, response = "timeout", None
        except httpx.HTTPError as error:
            outcome, response = f"error:{type(error).__name__}", None
        else:
            outcome = response.status_code
        if tally is not None:
            tally.record(kind, outcome, time.perf_counter() - started)
        return response

    def close(self) -> None:
        self.client.close()


def _ok(response: httpx.Response | None) -> bool:
    return response is not None and 200 <= response.status_code < 300


# --- the writers' requests (what an evaluation's flow run sends) -------------------------------------------------


def write_logs(api: Api, tally: Tally | None, flow_run_id: str, n: int) -> bool:
    logs = [
        {"name": "assay.bench", "level": 20, "message": f"case {n}.{i}: scored", "timestamp": _now(),
         "flow_run_id": flow_run_id}
        for i in range(LOGS_PER_BATCH)
    ]  # fmt: skip
    return _ok(api.post(tally, "logs", "/logs/", logs))


def write_task_run(api: Api, tally: Tally | None, flow_run_id: str, n: int) -> bool:
    created = api.post(tally, "task_run", "/task_runs/", {
        "flow_run_id": flow_run_id, "task_key": "score-case", "dynamic_key": f"{n}-{uuid.uuid4().hex[:8]}",
        "name": f"score-case-{n}", "state": {"type": "PENDING"},
    })  # fmt: skip
    if not _ok(created):
        return False
    task_run_id = created.json()["id"]
    ok = True
    for state in ("RUNNING", "COMPLETED"):
        ok &= _ok(api.post(tally, "task_run_state", f"/task_runs/{task_run_id}/set_state", {"state": {"type": state}}))
    return ok


def write_artifact(api: Api, tally: Tally | None, flow_run_id: str, n: int) -> bool:
    return _ok(api.post(tally, "artifact", "/artifacts/", {
        "key": f"scores-{uuid.uuid4().hex[:12]}", "type": "markdown", "description": "bench scores",
        "data": f"| case | score |\n|---|---|\n| {n} | 0.{n % 10} |", "flow_run_id": flow_run_id,
    }))  # fmt: skip


WRITES: list[Callable[[Api, Tally | None, str, int], bool]] = [write_logs, write_task_run, write_artifact]


# --- the reviewer's requests (what a person's form submit causes) ------------------------------------------------


def review_input(api: Api, tally: Tally | None, flow_run_id: str, n: int) -> bool:
    value = json.dumps({"approved": True, "comment": f"looks fine {n}"})
    return _ok(api.post(tally, "input", f"/flow_runs/{flow_run_id}/input",
                        {"key": f"review-{n}-{uuid.uuid4().hex[:8]}", "value": value}))  # fmt: skip


def review_pause(api: Api, tally: Tally | None, flow_run_id: str, n: int) -> bool:
    state = {"type": "PAUSED", "name": "Suspended", "state_details": {"pause_timeout": _now(3600),
             "pause_key": f"review-{n}"}}  # fmt: skip
    return _ok(api.post(tally, "pause", f"/flow_runs/{flow_run_id}/set_state", {"state": state, "force": True}))


def review_resume(api: Api, tally: Tally | None, flow_run_id: str, n: int) -> bool:
    return _ok(api.post(tally, "resume", f"/flow_runs/{flow_run_id}/resume", {"run_input": {"approved": True}}))


REVIEWS: list[Callable[[Api, Tally | None, str, int], bool]] = [review_input, review_pause, review_resume]


def setup(api_url: str, writers: int) -> tuple[list[str], str]:
    """A flow, one running flow run per writer and one for the reviewer; each request kind checked once."""
    api = Api(api_url, 30)
    try:
        flow = api.post(None, "flow", "/flows/", {"name": "assay-bench-locks"})
        if not _ok(flow):
            raise RuntimeError(f"POST /flows/ answered {flow.status_code if flow else 'nothing'}: "
                               f"{flow.text[:300] if flow else ''}")  # fmt: skip
        flow_id = flow.json()["id"]
        runs = []
        for i in range(writers + 1):
            run = api.post(None, "flow_run", "/flow_runs/", {"flow_id": flow_id, "name": f"bench-run-{i}",
                                                             "state": {"type": "RUNNING"}})  # fmt: skip
            if not _ok(run):
                raise RuntimeError(f"POST /flow_runs/ answered {run.status_code if run else 'nothing'}")
            runs.append(run.json()["id"])
        for check in WRITES + REVIEWS:
            probe = Tally()
            if not check(api, probe, runs[-1] if check in REVIEWS else runs[0], 0):
                raise RuntimeError(f"{check.__name__} failed without contention: {dict(probe.by_kind)}")
        return runs[:-1], runs[-1]
    finally:
        api.close()


def probe_after(api_url: str, flow_run_id: str) -> str:
    """How the server answers once the load has stopped: one health check and one log write, timed."""
    api = Api(api_url, 60)
    parts = []
    try:
        for name, call in (("health", lambda: api.client.get("/health")),
                           ("logs", lambda: api.client.post("/logs/", json=[{"name": "probe", "level": 20,
                            "message": "after", "timestamp": _now(), "flow_run_id": flow_run_id}]))):  # fmt: skip
            started = time.perf_counter()
            try:
                outcome = str(call().status_code)
            except httpx.HTTPError as error:
                outcome = type(error).__name__
            parts.append(f"{name} {outcome} in {(time.perf_counter() - started) * 1000:.0f} ms")
    finally:
        api.close()
    return ", ".join(parts)


def measure(api_url: str, args: argparse.Namespace) -> tuple[Tally, Tally, float, str]:
    writer_runs, review_run = setup(api_url, args.writers)
    writers_tally, reviewer_tally = Tally(), Tally()
    stop = threading.Event()

    def writer(flow_run_id: str) -> None:
        api = Api(api_url, args.timeout)
        n = 0
        while not stop.is_set():
            WRITES[n % len(WRITES)](api, writers_tally, flow_run_id, n)
            n += 1
        api.close()

    threads = [threading.Thread(target=writer, args=(run,), daemon=True) for run in writer_runs]
    for thread in threads:
        thread.start()
    api = Api(api_url, args.timeout)
    load_started = time.monotonic()
    deadline = load_started + args.seconds
    next_at = time.monotonic() + 1.0  # the writers first
    n = 0
    while time.monotonic() < deadline:
        time.sleep(max(0.0, next_at - time.monotonic()))
        REVIEWS[n % len(REVIEWS)](api, reviewer_tally, review_run, n)
        n += 1
        next_at = max(next_at + REVIEW_PERIOD_S, time.monotonic())
    stop.set()
    for thread in threads:
        thread.join(timeout=args.timeout + 5)
    api.close()
    return writers_tally, reviewer_tally, load_started, probe_after(api_url, review_run)


def _outcomes(tally: Tally) -> str:
    return ", ".join(f"{outcome}: {n}" for outcome, n in sorted(tally.outcomes.items(), key=lambda kv: str(kv[0])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=40.0, help="duration of the write load per server")
    parser.add_argument("--writers", type=int, default=8, help="writer threads")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-request timeout (counted, not retried)")
    parser.add_argument("--keep-logs", type=Path, help="copy each server's log here (plain.log, assay.log)")
    args = parser.parse_args()
    with open("/proc/loadavg") as handle:
        print(f"load average before: {handle.read().strip()} ({os.cpu_count()} CPUs)", flush=True)
    print(f"{args.writers} writers for {args.seconds:g} s; reviewer every {REVIEW_PERIOD_S} s; no client retries",
          flush=True)

    results: dict[str, tuple[Tally, Tally]] = {}
    for kind, label in (("plain", "prefect server start"), ("assay", "python -m assay.apps.prefect_serve")):
        with tempfile.TemporaryDirectory(prefix=f"assay-locks-{kind}-") as home:
            try:
                with running_server(kind, Path(home)) as api_url:
                    started = time.monotonic()
                    writers, reviewer, load_started, after = measure(api_url, args)
                    elapsed = time.monotonic() - started
            except RuntimeError as error:
                print(f"\n{kind} ({label}): not measured: {error}", flush=True)
                continue
            finally:
                if args.keep_logs:
                    args.keep_logs.mkdir(parents=True, exist_ok=True)
                    shutil.copy(Path(home) / "server.log", args.keep_logs / f"{kind}.log")
        results[kind] = (writers, reviewer)
        print(f"\n{kind} ({label}), {elapsed:.0f} s:")
        slowest_ms = max(reviewer.latencies_s, default=0) * 1000
        print(f"  reviewer: {reviewer.requests} requests, {reviewer.status_503} got 503, {reviewer.failures} "
              f"non-2xx/timeout; p50 {reviewer.percentile(0.5) * 1000:.0f} ms, "
              f"p95 {reviewer.percentile(0.95) * 1000:.0f} ms, max {slowest_ms:.0f} ms")
        for what, counts in sorted(reviewer.by_kind.items()):
            print(f"    {what:<7} {dict(sorted(counts.items(), key=lambda kv: str(kv[0])))}")
        print(f"  writers: {writers.requests} requests ({writers.requests / args.seconds:.0f}/s), "
              f"{writers.status_503} got 503, {writers.failures} non-2xx/timeout; "
              f"p50 {writers.percentile(0.5) * 1000:.0f} ms, p95 {writers.percentile(0.95) * 1000:.0f} ms")
        print(f"    outcomes {_outcomes(writers)}")
        timeouts = [t.first_timeout_at - load_started for t in (writers, reviewer) if t.first_timeout_at is not None]
        if timeouts:
            print(f"  first request that timed out (>{args.timeout:g} s) was sent {min(timeouts):.1f} s into the load")
        print(f"  after the load: {after}", flush=True)

    print()
    if set(results) != {"plain", "assay"}:
        print("no ratio: a server was not measured")
        return
    plain_writers, plain_reviewer = results["plain"]
    _, assay_reviewer = results["assay"]
    print(f"| {'server':<8} | {'reviewer req':>12} | {'503':>5} | {'non-2xx':>7} | {'p50 ms':>7} | {'p95 ms':>7} |")
    print(f"|{'-' * 10}|{'-' * 14}|{'-' * 7}|{'-' * 9}|{'-' * 9}|{'-' * 9}|")
    for kind, (_, reviewer) in results.items():
        print(f"| {kind:<8} | {reviewer.requests:>12} | {reviewer.status_503:>5} | {reviewer.failures:>7} | "
              f"{reviewer.percentile(0.5) * 1000:>7.0f} | {reviewer.percentile(0.95) * 1000:>7.0f} |")
    plain_rate = plain_reviewer.failures / max(1, plain_reviewer.requests)
    assay_rate = assay_reviewer.failures / max(1, assay_reviewer.requests)
    if plain_reviewer.failures:
        print(f"reviewer failure rate: plain {plain_rate:.1%}, assay {assay_rate:.1%}; "
              f"ratio assay/plain {assay_rate / plain_rate:.2f} (ratio against the baseline measured in the same run)")
    else:
        print(f"reviewer failure rate: plain 0 (of {plain_reviewer.requests}), assay {assay_rate:.1%}; "
              "ratio undefined (the baseline had no failures)")
    if plain_reviewer.status_503 + plain_writers.status_503 == 0:
        print(f"NOTE: the plain server answered no 503 at all: the load was not enough to provoke 'database is "
              f"locked', so this run shows nothing about the middleware; try more --writers "
              f"(e.g. --writers {args.writers * 2}) or longer --seconds.")


if __name__ == "__main__":
    main()
