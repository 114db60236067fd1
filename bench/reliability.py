"""One table of how Assay holds up against hostile inputs, faults, kills and tampering.

    inputs fuzzed / crashes / hangs      importers, conditions, JSON paths, JSON Schemas (watched worker)
    injected faults / lost cases         a host failing in every way, an object store failing mid-run
    kills / divergent results            `assay evaluate` killed with SIGKILL, rerun, compared with a clean run
    tamperings / missed                  every way of editing a store `assay artifacts verify` should notice
    hostile <section> / held / failed    duplicate keys, lone surrogates, CSV cell counts, a 100 MB reply,
                                         a blocked address, secret variants (bench/_hostile.py); trace
                                         credentials and personal data, strict trace lines, bundles, the
                                         store, network policy, names and inputs, secret disguises
                                         (bench/_hostile_round3.py, issue 35)

Usage: python bench/reliability.py [--examples N] [--kills K] [--skip-kills]
Fuzz inputs are drawn afresh each run (tests/fuzz runs a fixed, derandomised set in `make test`).
"""

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _faults
import _fuzz_inputs
import _hostile
import _hostile_round3
import _kills
import _tampering
from _fuzz_watchdog import run_watched

HANG_S = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=300, help="fuzz inputs per entry point and variant")
    parser.add_argument("--cases", type=int, default=200, help="cases for fault injection")
    parser.add_argument("--kills", type=int, default=3, help="SIGKILLed `assay evaluate` runs")
    parser.add_argument("--skip-kills", action="store_true", help="skip the kill section (~90 s, then ~25 s a kill)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows: list[tuple[str, int, str]] = []

    fuzz_inputs = fuzz_crashes = fuzz_hangs = 0
    for name, target, items in _fuzz_inputs.suites(args.examples):
        tally = run_watched(target, items, HANG_S)
        fuzz_inputs += tally.inputs
        fuzz_crashes += len(tally.crashes)
        fuzz_hangs += len(tally.hangs)
        print(f"fuzz {name}: {tally.inputs} inputs, {tally.refused} refused cleanly, "
              f"{len(tally.crashes)} crashes, {len(tally.hangs)} hangs", flush=True)
        for line in (tally.crashes + tally.hangs)[:5]:
            print(f"    {line}")
    rows.append(("inputs fuzzed", fuzz_inputs, f"{fuzz_crashes} crashes / {fuzz_hangs} hangs"))
    for chosen in (None, _hostile_round3.sections()):
        for section in _hostile.run(lambda line: print(line, flush=True), chosen):
            rows.append((section.name, section.tried, f"{section.held} held / {len(section.failures)} failed"))

    with tempfile.TemporaryDirectory(prefix="assay-reliability-") as work:
        faults, lost, detail = _faults.inject(Path(work), args.cases)
        print(f"faults: {detail}", flush=True)
        rows.append(("injected faults", faults, f"{lost} lost cases"))

        kills, divergent, detail = (0, 0, "skipped") if args.skip_kills else _kills.kill_and_resume(
            Path(work), args.kills
        )
        print(f"kills: {detail}", flush=True)
        rows.append(("kills", kills, f"{divergent} divergent results"))

        tamperings, missed, detail = _tampering.tamper_and_verify(Path(work))
        print(f"tampering: {detail}", flush=True)
        rows.append(("tamperings", tamperings, f"{missed} missed"))

    print()
    print(f"| {'what':<16} | {'count':>6} | {'outcome':<28} |")
    print(f"|{'-' * 18}|{'-' * 8}|{'-' * 30}|")
    for what, count, outcome in rows:
        print(f"| {what:<16} | {count:>6} | {outcome:<28} |")


if __name__ == "__main__":
    main()
