"""What the LLM judges cost on the sample suite, with and without the cascade, and what a rerun costs.

The sample suite (38 cases) is answered by the sample RAG, then every judged evaluator scores it against the
local rule-based judge (``assay/testing/judge_server.py``, the real ``openai`` client over HTTP on 127.0.0.1;
``--latency`` seconds per reply, to stand in for a real model). Three runs, each with its own judge cache
unless stated:
1. all: every case to the judge (the baseline);
2. cascade: only cases an offline proxy finds uncertain go to the judge (evaluators that declare a proxy);
3. rerun: run 1 again on run 1's cache.
Printed per run: judge calls, tokens, wall time and the ratio to the baseline; for the cascade, how often its
verdict (the judge's where it judged, the proxy's where it did not) agrees with judging everything, per
evaluator and in total. Goals: the rerun makes 0 calls; the cascade saves calls with agreement >= 0.9.

Usage: python bench/judges.py [--latency 0.0] [--band 0.15]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.evaluators import Services, build_evaluator, evaluator_class, evaluator_ids, run_evaluator

from assay.embeddings import shared_engine
from assay.formats import import_file
from assay.hosts import default_host_config
from assay.judges.client import open_judge
from assay.labs import build_test_lab
from assay.models import TestLab
from assay.models.evaluation import EvaluationResult
from assay.models.judges import JudgeAccount, JudgeEndpoint, JudgeRunOptions
from assay.testing.judge_server import JUDGE_MODEL, JudgeServer, serve_judge

SUITE = Path(__file__).resolve().parents[1] / "assay" / "data" / "sample_bank" / "suite.json"
PARAMETERS: dict[str, dict[str, Any]] = {
    "byop": {"prompt": "Does the answer <answer>{{ actual_answer }}</answer> respond to "
                       "<question>{{ question }}</question>? Say whether it passes."},
    "custom_answer_judge": {"assessment_name": "polite", "prompt": "Is the response {{ response }} to the request "
                                                                    "{{ request }} polite?"},
    "custom_retrieval_judge": {"assessment_name": "on_topic", "prompt": "Is the chunk {{ retrieved_context }} "
                                                                         "about the request {{ request }}?"},
}  # fmt: skip


def judged_ids() -> list[str]:
    return [evaluator_id for evaluator_id in evaluator_ids() if "llm" in evaluator_class(evaluator_id).spec.needs]


def run_all(lab: TestLab, endpoint: JudgeEndpoint, cache: Path, options: JudgeRunOptions) -> tuple[
    list[EvaluationResult], JudgeAccount, float
]:  # fmt: skip
    engine = shared_engine()
    started = time.perf_counter()
    results, total = [], JudgeAccount()
    for evaluator_id in judged_ids():
        services = Services(
            embedder_factory=lambda: engine,
            judge_factory=lambda: open_judge(endpoint, cache),
            judge_options=options,
        )
        result = run_evaluator(build_evaluator(evaluator_id, services, **PARAMETERS.get(evaluator_id, {})), lab)
        results.append(result)
        if result.judge is not None:
            total = total.merged(result.judge.account)
    return results, total, time.perf_counter() - started


def verdict(result: EvaluationResult, row_index: int) -> bool | None:
    """The case's pass/fail on the primary metric (threshold in force), or the cascade's offline verdict."""
    row = result.rows[row_index]
    metric = result.evaluator.primary_metric
    value = row.scores.get(metric.key)
    if value is not None:
        return metric.passes(value, result.threshold(metric.key))
    cascade = row.details.get("cascade", {})
    return {"pass": True, "fail": False}.get(cascade.get("verdict"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the judge takes per reply")
    parser.add_argument("--band", type=float, default=0.15, help="half-width of the cascade's uncertain band")
    args = parser.parse_args()
    suite = import_file(SUITE, "auto")
    engine = shared_engine()
    lab = build_test_lab(suite, [default_host_config("sample-rag")], run_id="bench-judges", embedder=lambda: engine)
    print(f"sample suite: {len(lab.rows)} cases answered by sample-rag; {len(judged_ids())} judged evaluators")
    with serve_judge(JudgeServer()) as judge, tempfile.TemporaryDirectory() as folder:
        judge.server.latency_s = args.latency
        endpoint = JudgeEndpoint(base_url=judge.url, model=JUDGE_MODEL,
                                 calls={"concurrency": 16, "retries": 1, "backoff_s": 0.01})  # fmt: skip
        full, full_account, full_wall = run_all(lab, endpoint, Path(folder) / "all", JudgeRunOptions())
        cascade_options = JudgeRunOptions(cascade=True, band=args.band)
        cascaded, cascade_account, cascade_wall = run_all(lab, endpoint, Path(folder) / "cascade", cascade_options)
        _, rerun_account, rerun_wall = run_all(lab, endpoint, Path(folder) / "all", JudgeRunOptions())
    print(f"{'run':>8} {'calls':>7} {'cache hits':>10} {'tokens':>9} {'wall s':>7} {'calls/all':>9} {'wall/all':>8}")
    for name, account, wall in (("all", full_account, full_wall), ("cascade", cascade_account, cascade_wall),
                                ("rerun", rerun_account, rerun_wall)):  # fmt: skip
        tokens = account.input_tokens + account.output_tokens
        print(f"{name:>8} {account.calls:>7} {account.cache_hits:>10} {tokens:>9} {wall:>7.1f} "
              f"{account.calls / max(full_account.calls, 1):>9.3f} {wall / full_wall:>8.3f}")  # fmt: skip
    print(f"\ncascade (band {args.band}) per evaluator with an offline proxy:")
    print(f"{'evaluator':>28} {'proxy':>38} {'judged':>6} {'offline':>7} {'calls all':>9} {'cascade':>7} "
          f"{'agree':>6} {'of':>4}")  # fmt: skip
    agreed = compared = calls_all = calls_cascade = 0
    for full_result, cascade_result in zip(full, cascaded, strict=True):
        proxy = evaluator_class(full_result.evaluator.id).cascade_proxy  # type: ignore[attr-defined]
        if not proxy or cascade_result.judge is None or cascade_result.judge.cascade is None:
            continue
        pairs = [(verdict(full_result, i), verdict(cascade_result, i)) for i in range(len(full_result.rows))]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        same = sum(a == b for a, b in pairs)
        agreed, compared = agreed + same, compared + len(pairs)
        counts = cascade_result.judge.cascade
        before, after = full_result.judge.account.calls, cascade_result.judge.account.calls  # type: ignore[union-attr]
        calls_all, calls_cascade = calls_all + before, calls_cascade + after
        print(f"{full_result.evaluator.id:>28} {proxy:>38} {counts['sent_to_judge']:>6} "
              f"{counts['decided_offline']:>7} {before:>9} {after:>7} {same / max(len(pairs), 1):>6.3f} "
              f"{len(pairs):>4}")  # fmt: skip
    print(f"{'total':>28} {'':>38} {'':>6} {'':>7} {calls_all:>9} {calls_cascade:>7} "
          f"{agreed / max(compared, 1):>6.3f} {compared:>4}")  # fmt: skip


if __name__ == "__main__":
    main()
