"""What an idle kept Prefect server costs: Prefect's service defaults against Assay's, measured in the same run.

Assay keeps one local Prefect server per user for up to ``prefect_server_idle_minutes`` after the last command.
While it waits, Prefect's background services wake every few seconds (late runs, pause expirations, cleanup
reconciler every 5 s; foreman and repossessor every 15 s; the triggers service...). Assay sets their loops to a
minute or more and turns off the ones it never uses (``assay.apps.prefect_server.IDLE_SERVICE_SETTINGS``).

Three servers, each with a fresh PREFECT_HOME, start together: ``prefect server start`` as a user runs it,
``python -m assay.apps.prefect_serve`` as Assay's kept server runs (its settings and a calmer background worker,
``assay.apps.prefect_serve.calmer_background_worker``), and the same with every service off (the floor), settle for
``--settle`` seconds, then the CPU time of each process tree is read over ``--seconds`` seconds (both measured
over the same window, so both see the same machine load). Printed: % of one core for each, and the ratio.
The goal (issue 25): the idle server under 1% of a core.

Run: .venv/bin/python bench/idle_server.py [--seconds 120] [--settle 45]
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.apps.prefect_server import IDLE_SERVICE_SETTINGS


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


NO_SERVICES = {
    f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false"
    for name in ("CANCELLATION_CLEANUP", "EVENT_PERSISTER", "FOREMAN", "LATE_RUNS", "SCHEDULER", "PAUSE_EXPIRATIONS",
                 "REPOSSESSOR", "CLEANUP_RECONCILER", "TASK_RUN_RECORDER", "TRIGGERS")
}
"""The floor: Prefect's API and UI with every background service off (not usable by Assay: for comparison)."""

VARIANTS = {"prefect defaults": None, "assay settings": IDLE_SERVICE_SETTINGS, "no services": NO_SERVICES}
"""None: ``prefect server start`` as a user runs it; else ``python -m assay.apps.prefect_serve`` with these settings."""


def _start(home: Path, settings: dict[str, str] | None) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_")}
    environment.update(PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false")
    environment.update(settings or {})
    log = (home / "server.log").open("wb")
    served = ["prefect", "server", "start"] if settings is None else ["assay.apps.prefect_serve"]
    command = [sys.executable, "-m", *served, "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT), port


def _wait_healthy(port: int, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"server on port {port} did not answer within {timeout_s:.0f} s")


def _cpu_seconds(pid: int) -> float:
    root = psutil.Process(pid)
    total = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120.0, help="measuring window")
    parser.add_argument("--settle", type=float, default=45.0, help="wait after both servers answer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-idle-") as work:
        servers = {}
        for name, settings in VARIANTS.items():
            home = Path(work) / name.replace(" ", "-")
            home.mkdir()
            servers[name] = _start(home, settings)
        try:
            for _, port in servers.values():
                _wait_healthy(port)
            time.sleep(args.settle)
            before = {name: _cpu_seconds(process.pid) for name, (process, _) in servers.items()}
            started = time.monotonic()
            time.sleep(args.seconds)
            elapsed = time.monotonic() - started
            after = {name: _cpu_seconds(process.pid) for name, (process, _) in servers.items()}
        finally:
            for process, _ in servers.values():
                process.terminate()
            for process, _ in servers.values():
                process.wait(timeout=30)
    load = os.getloadavg()[0]
    shares = {name: 100 * (after[name] - before[name]) / elapsed for name in servers}
    print(f"idle Prefect server, {elapsed:.0f} s window, load average {load:.1f} on {os.cpu_count()} cores")
    for name, share in shares.items():
        print(f"  {name:<17} {share:6.2f}% of one core")
    baseline = shares["prefect defaults"]
    ratio = shares["assay settings"] / baseline if baseline > 0 else float("nan")
    print(f"  ratio assay/defaults {ratio:.2f}; goal: assay settings under 1% of a core")


if __name__ == "__main__":
    main()
