"""The full MRM demo (``assay demo``: nine steps, sample corpus, both sample RAG systems) timed step by step.

Runs the demo as a user does (a separate ``assay`` process) in a fresh temporary Assay home, then again:

- cold: a new home and store, empty caches (embeddings, Prefect results), numba's JIT cache compiled first as
  ``make install`` does for ``make demo`` (``python -m assay.mrm.topic_jit``, timed apart); ``--numba-cold``
  leaves it empty too (the compile then adds ~20 s to topic modeling);
- warm: the same home again, every cache kept (a new run: hosts are asked again, pure steps may be reused);
- recompute (optional): a new home and store sharing only the cold run's cache folder (embeddings and numba
  JIT warm), so every step computes again: what a second corpus or new parameters cost.

Each run talks to a Prefect server started here once (its start is timed and reported as Prefect's share but
kept out of the command's wall time), or to ``--prefect-api-url``. Step times are read back from that server:
a step's wall is from its "<step>: started" log line to the next step's; "in tasks" sums its task runs' run
time; the library seconds are the ones the workflow itself records (``timing.library_s``). Ratios against the
120 s goal are printed; the machine is shared, so compare runs taken in the same invocation.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from assay.models.steps import Step

STEPS = [step.value for step in Step]  # the workflow's own step list, in order

GOAL_S = 120.0
BIN = Path(sys.executable).parent
PAGE = 200


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def prefect_server(folder: Path) -> Iterator[tuple[str, float]]:
    """A Prefect server on a free loopback port with its own home; yields its API URL and start seconds."""
    port = free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(folder / "prefect-server"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    log = (folder / "prefect-server.log").open("wb")
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        while True:
            if server.poll() is not None:
                raise SystemExit(f"the Prefect server exited early; see {folder / 'prefect-server.log'}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.perf_counter() - started > 240:
                raise SystemExit(f"the Prefect server did not answer in 240 s; see {folder / 'prefect-server.log'}")
            time.sleep(0.5)
        yield url, time.perf_counter() - started
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def run_demo(home: Path, out: Path, api_url: str, cache_dir: Path | None = None) -> dict[str, Any]:
    """One ``assay demo`` process; returns its wall seconds and epoch start/end (to align with server times)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ASSAY_", "PREFECT_", "NUMBA_"))}
    env.update(
        ASSAY_HOME=str(home),
        PREFECT_API_URL=api_url,
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    if cache_dir is not None:
        env["ASSAY_CACHE_DIR"] = str(cache_dir)
    log = home.parent / f"{out.name}.log"
    started_at, started = time.time(), time.perf_counter()
    with log.open("wb") as sink:
        code = subprocess.call([str(BIN / "assay"), "demo", "--out", str(out)], stdout=sink, stderr=sink, env=env)
    wall = time.perf_counter() - started
    if code != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"assay demo exited {code} (log {log}):\n{tail}")
    return {"wall": wall, "start": started_at, "end": started_at + wall, "out": out}


def prewarm_numba(home: Path) -> float:
    """Compile UMAP's numba kernels into ``home``'s cache folder, where ``assay demo`` reads them (as ``make
    install`` does into the project's ``.assay``); returns the seconds it took."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ASSAY_", "PREFECT_", "NUMBA_"))}
    env["NUMBA_CACHE_DIR"] = str(home / "cache" / "numba")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "assay.mrm.topic_jit"], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def _post_all(client: httpx.Client, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while True:
        page = client.post(path, json={**body, "limit": PAGE, "offset": len(rows)})
        page.raise_for_status()
        rows += page.json()
        if len(page.json()) < PAGE:
            return rows


def _epoch(stamp: str | None) -> float | None:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() if stamp else None


def step_breakdown(api_url: str, run: dict[str, Any]) -> dict[str, Any]:
    """Per segment of the run (start-up, each step, artifacts, exit): wall, seconds in task runs, cached tasks."""
    import json

    summary = json.loads((run["out"] / "workflow_summary.json").read_text())
    with httpx.Client(base_url=api_url, timeout=30) as client:
        attempts = _post_all(
            client,
            "/flow_runs/filter",
            {"flow_runs": {"tags": {"all_": [f"assay-run:{summary['run_id']}"]}}, "sort": "START_TIME_DESC"},
        )
        flow_run = attempts[0]
        logs = _post_all(
            client, "/logs/filter", {"logs": {"flow_run_id": {"any_": [flow_run["id"]]}}, "sort": "TIMESTAMP_ASC"}
        )
        tasks = _post_all(client, "/task_runs/filter", {"flow_runs": {"id": {"any_": [flow_run["id"]]}}})
    marks: dict[str, float] = {}
    for record in logs:
        for step in STEPS:
            for event in ("started", "done"):
                if record["message"].startswith(f"{step}: {event}"):
                    marks.setdefault(f"{step} {event}", _epoch(record["timestamp"]) or 0.0)
    flow_end = _epoch(flow_run["end_time"]) or run["end"]
    bounds = [run["start"]] + [marks[f"{step} started"] for step in STEPS] + [marks[f"{STEPS[-1]} done"], flow_end]
    names = ["start-up (imports, CLI, flow start)", *STEPS, "artifacts and report", "exit"]
    segments = {}
    for index, name in enumerate(names):
        low, high = bounds[index], (bounds[index + 1] if index + 1 < len(bounds) else run["end"])
        inside = [t for t in tasks if (start := _epoch(t["start_time"])) is not None and low <= start < high]
        segments[name] = {
            "wall": high - low,
            "in_tasks": sum(float(t["total_run_time"] or 0.0) for t in inside),
            "cached": sum(t["state_name"] == "Cached" for t in inside),
            "tasks": len(inside),
        }
    flow_wall = flow_end - (_epoch(flow_run["start_time"]) or run["start"])
    in_tasks = sum(float(t["total_run_time"] or 0.0) for t in tasks)
    return {
        "segments": segments,
        "library": float(summary.get("timing", {}).get("library_s", 0.0)),
        "in_tasks": in_tasks,
        "flow_wall": flow_wall,
        "tasks": len(tasks),
    }


def print_report(runs: dict[str, dict[str, Any]], server_start: float | None) -> None:
    labels = list(runs)
    print(f"\n{'segment':38}" + "".join(f"{label + ' wall':>16}{'in tasks':>10}" for label in labels))
    names = list(next(iter(runs.values()))["breakdown"]["segments"])
    for name in names:
        cells = []
        for label in labels:
            segment = runs[label]["breakdown"]["segments"][name]
            cached = f" ({segment['cached']}c)" if segment["cached"] else ""
            cells.append(f"{segment['wall']:>10.1f}{cached:>6}{segment['in_tasks']:>10.1f}")
        print(f"{name:38}" + "".join(cells))
    print(f"{'command wall':38}" + "".join(f"{runs[label]['wall']:>16.1f}{'':>10}" for label in labels))
    print("(Nc: N task runs served from Prefect's cache)\n")
    for label in labels:
        run, breakdown = runs[label], runs[label]["breakdown"]
        wall, library = run["wall"], breakdown["library"]
        task_overhead = max(breakdown["in_tasks"] - library, 0.0)
        between = max(breakdown["flow_wall"] - breakdown["in_tasks"], 0.0)
        outside_flow = max(wall - breakdown["flow_wall"], 0.0)
        start = server_start or 0.0
        prefect = start + task_overhead + between
        total = wall + start
        print(
            f"{label}: {wall:.1f} s wall ({wall / GOAL_S:.2f}x the {GOAL_S:.0f} s goal: "
            f"{'met' if wall <= GOAL_S else 'NOT met'}); {breakdown['tasks']} task runs\n"
            f"  library code {library:.1f} s ({library / total:.0%}); Prefect {prefect:.1f} s ({prefect / total:.0%}) ="
            f" server start {start:.1f} + in task runs outside library code {task_overhead:.1f}"
            f" + flow body between task runs {between:.1f}; outside the flow run (imports, CLI, exit)"
            f" {outside_flow:.1f} s ({outside_flow / total:.0%}); shares of {total:.1f} s = wall + server start"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefect-api-url", help="use this running Prefect server instead of starting one")
    parser.add_argument(
        "--runs", default="cold,warm", help="comma-separated, in order: cold, warm, recompute (default cold,warm)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (homes, exports, logs)")
    parser.add_argument("--numba-cold", action="store_true", help="cold run with an empty numba JIT cache too")
    args = parser.parse_args()
    wanted = [name.strip() for name in args.runs.split(",") if name.strip()]
    if not wanted or wanted[0] != "cold" or set(wanted) - {"cold", "warm", "recompute"}:
        raise SystemExit("--runs: start with cold, then any of warm, recompute (e.g. cold,warm,recompute)")
    folder = Path(tempfile.mkdtemp(prefix="assay-mrm-demo-"))
    try:
        with _server(args.prefect_api_url, folder) as (api_url, server_start):
            where = "given" if args.prefect_api_url else f"started here in {server_start:.1f} s"
            print(f"Prefect server {api_url} ({where}); temporary folder {folder}", flush=True)
            home = folder / "home"
            if not args.numba_cold:
                print(f"numba JIT cache compiled as make install does: {prewarm_numba(home):.1f} s (not timed below)")
            runs: dict[str, dict[str, Any]] = {}
            for label in wanted:
                if label == "recompute":
                    run = run_demo(folder / "home-recompute", folder / label, api_url, cache_dir=home / "cache")
                else:
                    run = run_demo(home, folder / label, api_url)
                run["breakdown"] = step_breakdown(api_url, run)
                runs[label] = run
                print(f"{label}: {run['wall']:.1f} s", flush=True)
            print_report(runs, server_start)
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _server(api_url: str | None, folder: Path) -> Iterator[tuple[str, float | None]]:
    if api_url:
        yield api_url.rstrip("/"), None
        return
    with prefect_server(folder) as (url, seconds):
        yield url, seconds


if __name__ == "__main__":
    main()
