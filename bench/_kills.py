"""Kill `assay evaluate` with SIGKILL at random moments, rerun the same command, and compare every score with an
uninterrupted run of the same inputs. Operational metrics that measure the wall clock (latency) are left out of
the comparison: they differ between any two runs by nature."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

TIMED_EVALUATORS = {"latency"}
EVALUATORS = "text_matching,answer_semantic_similarity,groundedness,pii_leakage"


def _command(suite: Path, out: Path) -> list[str]:
    assay = Path(sys.executable).with_name("assay")
    return [str(assay), "evaluate", "--suite", str(suite), "--host", "sample-rag", "--host", "sample-rag-keyword",
            "--evaluators", EVALUATORS, "--out", str(out)]


def _environment(work: Path) -> dict[str, str]:
    return os.environ | {"ASSAY_HOME": str(work / "home"), "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180"}


def _scores(out: Path) -> dict[str, float | None]:
    values: dict[str, float | None] = {}
    for path in sorted(out.glob("*/results.json")):
        if path.parent.name in TIMED_EVALUATORS:
            continue
        document = json.loads(path.read_text(encoding="utf-8"))
        metrics = [meta["key"] for meta in document["evaluator"]["metrics_meta"]]
        for row in document["results"]:
            for metric in metrics:
                values[f"{path.parent.name}/{row['model_key']}/{row['test_case_key']}/{metric}"] = row.get(metric)
    return values


def _suite(work: Path, cases: int) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from evaluate_all import build_suite

    path = work / "kill-suite.json"
    path.write_text(json.dumps(build_suite(cases)), encoding="utf-8")
    return path


def kill_and_resume(work: Path, kills: int, cases: int = 300) -> tuple[int, int, str]:
    suite, env, rng = _suite(work, cases), _environment(work), random.Random(11)
    started = time.perf_counter()
    subprocess.run(_command(suite, work / "clean"), env=env, cwd=work, check=True, capture_output=True)
    clean_s = time.perf_counter() - started
    reference = _scores(work / "clean")
    divergent = 0
    details = []
    for attempt in range(kills):
        out = work / f"killed-{attempt}"
        delay = rng.uniform(0.3, 0.9) * clean_s
        process = subprocess.Popen(_command(suite, out), env=env, cwd=work, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        killed = process.poll() is None
        if killed:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        rerun = subprocess.run(_command(suite, out), env=env, cwd=work, capture_output=True, text=True)
        resumed = _scores(out)
        differing = sum(1 for key, value in reference.items() if resumed.get(key, "missing") != value)
        differing += len(set(resumed) - set(reference))
        divergent += differing
        details.append(f"kill at {delay:.0f}s ({'killed' if killed else 'already finished'}), rerun exit "
                       f"{rerun.returncode}, {differing} of {len(reference)} values differ")
    return kills, divergent, f"clean run {clean_s:.0f}s; " + "; ".join(details)
