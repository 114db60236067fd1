"""Kill `assay evaluate` with SIGKILL mid-run, rerun the same command, and compare every score with an
uninterrupted run of the same inputs.

Kills rotate between three moments: after a chosen number of answer-checkpoint shards were written (inside
the lab build), once an evaluator has written its first score checkpoint (inside an evaluator: the lab has more
test cases than a score shard holds), and at a random point of a warm run's duration (often inside the
evaluators or publishing).
Only runs that were still going when the signal came count as kills. Operational metrics that measure the
wall clock (latency) are left out of the comparison: they differ between any two runs by nature.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

TIMED_EVALUATORS = {"latency"}
EVALUATORS = "text_matching,answer_semantic_similarity,groundedness,pii_leakage"
SHARD_SIZE = 32


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


def _differing(reference: dict[str, float | None], other: dict[str, float | None]) -> int:
    return sum(1 for key, value in reference.items() if other.get(key, "missing") != value) + len(
        set(other) - set(reference)
    )


def _suite(work: Path, cases: int) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from evaluate_all import build_suite

    path = work / "kill-suite.json"
    path.write_text(json.dumps(build_suite(cases)), encoding="utf-8")
    return path


def _timed_run(suite: Path, out: Path, env: dict[str, str], work: Path) -> float:
    started = time.perf_counter()
    subprocess.run(_command(suite, out), env=env, cwd=work, check=True, capture_output=True)
    return time.perf_counter() - started


def _shards(work: Path) -> set[Path]:
    return set((work / "home" / "store" / "runs").glob("*/lab/*/shard-*.json"))


def _score_checkpoints(work: Path) -> set[Path]:
    return set((work / "home" / "store" / "runs").glob("*/scores/*/*.json"))


def _kill_when(process: subprocess.Popen, ready: Callable[[], bool], deadline_s: float) -> bool:  # type: ignore[type-arg]
    """SIGKILL the process group once ``ready()`` holds (or at the deadline); whether it was still running."""
    started = time.perf_counter()
    while process.poll() is None and not ready() and time.perf_counter() - started < deadline_s:
        time.sleep(0.05)
    if process.poll() is not None:
        return False
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return True


def kill_and_resume(work: Path, kills: int, cases: int = 1100) -> tuple[int, int, str]:
    """``cases`` above ``SCORE_SHARD_SIZE`` (500), so evaluators write score checkpoints a kill can land between."""
    suite, env, rng = _suite(work, cases), _environment(work), random.Random(11)
    clean_s = _timed_run(suite, work / "clean", env, work)
    warm_s = _timed_run(suite, work / "warm", env, work)
    reference = _scores(work / "clean")
    divergent = _differing(reference, _scores(work / "warm"))
    details = [f"clean run {clean_s:.0f}s, warm run {warm_s:.0f}s ({divergent} values differ between them)"]
    shards_per_run = 2 * -(-cases // SHARD_SIZE)
    killed = 0
    for attempt in range(kills):
        out = work / f"killed-{attempt}"
        before, scores_before = _shards(work), _score_checkpoints(work)
        process = subprocess.Popen(_command(suite, out), env=env, cwd=work, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        if attempt % 3 == 0:
            after = rng.randint(1, shards_per_run - 1)
            moment = f"after shard {after} of {shards_per_run}"
            was_running = _kill_when(
                process, lambda after=after, before=before: len(_shards(work) - before) >= after, 3 * clean_s
            )
        elif attempt % 3 == 1:
            moment = "after an evaluator's first score checkpoint"
            was_running = _kill_when(
                process, lambda known=scores_before: bool(_score_checkpoints(work) - known), 3 * clean_s
            )
        else:
            delay = rng.uniform(0.2, 0.95) * warm_s
            moment = f"at {delay:.0f}s of a {warm_s:.0f}s run"
            was_running = _kill_when(process, lambda: False, delay)
        killed += was_running
        rerun = subprocess.run(_command(suite, out), env=env, cwd=work, capture_output=True, text=True)
        differing = _differing(reference, _scores(out))
        divergent += differing
        error = rerun.stderr.strip().splitlines()[-1][:300] if rerun.returncode and rerun.stderr.strip() else ""
        failure = f" ({error})" if error else ""
        details.append(f"kill {moment} ({'killed mid-run' if was_running else 'had already finished'}), "
                       f"rerun exit {rerun.returncode}{failure}, {differing} of {len(reference)} values differ")
    return killed, divergent, "; ".join(details)
