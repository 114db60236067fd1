"""Time the evaluate flow on Dask: no Dask vs a local cluster of 1 worker vs 2 workers, in one process.

A lab of N generated cases (distinct texts, generated as in bench/encoder.py) is evaluated with
answer_semantic_similarity and groundedness (embedding-bound: the floor on CPU). Each mode gets its own empty
Assay home (embedding cache included), so no mode is served from another's cache; the worker processes'
start-up and model loading are inside the timed flow run, as in real use. Prints the wall times and the
2-worker / 1-worker ratio measured in this run.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.encoder import make_texts

EVALUATORS = ["answer_semantic_similarity", "groundedness"]


def build_lab(cases: int, folder: Path, file_name: str = "lab.json") -> Path:
    """A lab of distinct texts (bench/encoder.py's generator): question, answer, expected answer and one
    100-250 word context chunk per case, so nothing is deduplicated away."""
    from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow

    texts, _pairs = make_texts(cases * 3)
    rows = [
        TestLabRow(
            test_case=TestCase(key=f"case-{index:05d}", prompt=texts[3 * index],
                               expected_output=f"According to the sheet: {texts[3 * index + 1]}"),
            model_key="bench",
            actual_output=texts[3 * index + 1],
            context=[RetrievedChunk(text=texts[3 * index + 2])],
        )
        for index in range(cases)
    ]  # fmt: skip
    lab = TestLab(name=f"bench {cases} cases", models=[ModelHost(key="bench", type="sample-rag")], rows=rows)
    path = folder / file_name
    path.write_text(lab.model_dump_json())
    return path


def timed_run(lab: Path, folder: Path, mode: str, workers: int, shard_size: int) -> tuple[float, dict]:
    os.environ["ASSAY_HOME"] = str(folder / mode / "home")
    from assay.flows.evaluate import evaluate_flow

    started = time.perf_counter()
    evaluate_flow(
        out=str(folder / mode / "out"),
        lab=str(lab),
        evaluators=EVALUATORS,
        name=f"bench-{mode}",
        shard_size=shard_size if workers else 0,
        dask_workers=workers,
    )
    elapsed = time.perf_counter() - started
    results = {
        evaluator_id: json.loads((folder / mode / "out" / evaluator_id / "results.json").read_text())["results"]
        for evaluator_id in EVALUATORS
    }
    return elapsed, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--shard-size", type=int, default=250)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        os.environ.setdefault("PREFECT_HOME", str(folder / "prefect"))
        os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        os.environ["ASSAY_HOME"] = str(folder / "lab-home")
        started = time.perf_counter()
        lab = build_lab(args.cases, folder)
        print(f"lab of {args.cases} cases built in {time.perf_counter() - started:.1f} s (not timed below)")
        from assay.apps.prefect_env import configure_prefect
        from assay.config import load_settings

        configure_prefect(load_settings())
        timed_run(build_lab(10, folder, "tiny.json"), folder, "warm-up", 0, 0)  # Prefect's server and imports, once
        times, results = {}, {}
        for mode, workers in (("no-dask", 0), ("1-worker", 1), ("2-workers", 2)):
            times[mode], results[mode] = timed_run(lab, folder, mode, workers, args.shard_size)
            print(f"{mode:10s} {times[mode]:8.1f} s wall (whole flow, {args.cases} cases, {', '.join(EVALUATORS)})")
        print(f"2 workers vs 1 worker: {times['1-worker'] / times['2-workers']:.2f}x faster")
        print(f"2 workers vs no Dask:  {times['no-dask'] / times['2-workers']:.2f}x faster")
        for mode in ("1-worker", "2-workers"):
            largest, other = 0.0, 0
            for evaluator_id in EVALUATORS:
                for row, reference in zip(results[mode][evaluator_id], results["no-dask"][evaluator_id], strict=True):
                    for key in (row.keys() | reference.keys()) - {"lab_row", "details"}:
                        mine, theirs = row.get(key), reference.get(key)
                        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (mine, theirs))
                        if numbers:
                            largest = max(largest, abs(mine - theirs))
                        elif mine != theirs:
                            other += 1
            print(f"{mode} vs no Dask: largest score difference {largest:.2g} (float noise of batch shapes is"
                  f" <= 1e-6), {other} other field(s) differ")


if __name__ == "__main__":
    main()
