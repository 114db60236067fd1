"""Write ``tests/durations.txt`` from a whole run: pytest's ``--durations=0`` output and the CPU log that
``ASSAY_TEST_CPU_LOG`` makes (tests/conftest.py).

    ASSAY_TEST_CPU_LOG=/tmp/cpu.log PYTEST_ADDOPTS="--durations=0" make test > /tmp/test.log 2>&1
    python -m tests.support.durations_file /tmp/test.log /tmp/cpu.log --about "fresh clone at abc1234, ..."

The file orders the test files for xdist (longest first) and chooses what ``make check`` leaves out (files of
at least ``QUICK_FILE_LIMIT_S`` worker-seconds), so it is written from a measured run only, never by hand."""

import argparse
import re
import textwrap
from collections import defaultdict
from pathlib import Path

DURATIONS = Path(__file__).resolve().parents[1] / "durations.txt"
PHASE = re.compile(r"^(?P<seconds>\d+\.\d+)s (?P<phase>call|setup|teardown)\s+(?P<node>\S.*)$")
SUMMARY = re.compile(r"^=* ?(?P<summary>\d+ passed.*) in (?P<seconds>[\d.]+)s")
TOP_FILES = 30
SHOWN_PHASE_S = 1.0
QUICK_FILE_LIMIT_S = 10.0
"""``make check`` leaves out the test files that took at least this many worker-seconds in the measured run."""


def seconds_per_file(durations: str) -> dict[str, float]:
    """Worker-seconds per test file: the sum of its phases that ``durations.txt`` lists."""
    costs: dict[str, float] = defaultdict(float)
    for line in durations.splitlines():
        match = None if line.startswith("#") else PHASE.match(line)
        if match:
            costs[match["node"].split("::")[0]] += float(match["seconds"])
    return dict(costs)


def heavy_files(durations: str, limit_s: float = QUICK_FILE_LIMIT_S) -> set[str]:
    """The test files ``make check`` leaves out: those measured at ``limit_s`` worker-seconds or more."""
    return {path for path, seconds in seconds_per_file(durations).items() if seconds >= limit_s}


def phases(test_log: str) -> list[tuple[float, str, str]]:
    """(seconds, phase, node id) of every phase pytest's ``--durations=0`` printed."""
    found = []
    for line in test_log.splitlines():
        match = PHASE.match(line.strip())
        if match:
            found.append((float(match["seconds"]), match["phase"], match["node"].strip()))
    return found


def cpu_per_file(cpu_log: str) -> dict[str, float]:
    """CPU seconds per test file from the CPU log ('cpu wall node-id [worker ended]' a line)."""
    totals: dict[str, float] = defaultdict(float)
    for line in cpu_log.splitlines():
        parts = line.split(" ")
        if len(parts) >= 3:
            totals[parts[2].split("::")[0]] += float(parts[0])
    return totals


def render(test_log: str, cpu_log: str, about: str) -> str:
    measured = phases(test_log)
    if not measured:
        raise SystemExit("no --durations=0 lines in the test log: run pytest with PYTEST_ADDOPTS=--durations=0")
    summary = next((m for m in map(SUMMARY.search, test_log.splitlines()) if m), None)
    wall: dict[str, float] = defaultdict(float)
    for seconds, _, node in measured:
        wall[node.split("::")[0]] += seconds
    cpu = cpu_per_file(cpu_log)
    shown = [phase for phase in measured if phase[0] >= SHOWN_PHASE_S]
    lines = ["# " + line for line in textwrap.wrap(f"Test durations: {about}", width=116)]
    if summary:
        lines.append(f"# pytest: {summary['summary']} in {float(summary['seconds']):,.0f} s wall.")
    lines += [
        "# Written by `python -m tests.support.durations_file` (its docstring says how); xdist's order and",
        "# `make check` read it.",
        "#",
        f"# worker-seconds per file (top {TOP_FILES}), with the CPU seconds of the file's tests and the processes "
        "they waited for:",
    ]
    for path, seconds in sorted(wall.items(), key=lambda item: -item[1])[:TOP_FILES]:
        lines.append(f"#  {seconds:8.1f} s wall  {cpu.get(path, 0.0):7.1f} s CPU  {path}")
    lines += ["#", f"# every phase of at least {SHOWN_PHASE_S:g} s ({len(shown)} of {len(measured)}):"]
    lines += [f"{seconds:.2f}s {phase:<8} {node}" for seconds, phase, node in shown]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test_log", type=Path, help="make test's output, run with --durations=0")
    parser.add_argument("cpu_log", type=Path, help="the file ASSAY_TEST_CPU_LOG named")
    parser.add_argument("--about", required=True, help="which run: commit, machine, workers, wall and CPU totals")
    parser.add_argument("--out", type=Path, default=DURATIONS)
    options = parser.parse_args(argv)
    text = render(options.test_log.read_text(errors="replace"), options.cpu_log.read_text(), options.about)
    options.out.write_text(text, encoding="utf-8")
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
