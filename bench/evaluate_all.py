"""Time ``assay evaluate --evaluators all`` on 1,000 test cases against the sample RAG system.

The cases are the bundled sample suite's questions rephrased with varied openers and closers, so every
question is a distinct text (nothing is served from the embedding memo by accident). Prints the wall time
of the whole flow, of building the test lab, and of each evaluator, plus cases/s.
"""

import argparse
import itertools
import json
import os
import tempfile
import time
from pathlib import Path

OPENERS = [
    "",
    "Quick question: ",
    "Could you tell me: ",
    "I'd like to know - ",
    "Please explain: ",
    "Hi, ",
    "As a customer, ",
    "For my records, ",
    "Urgent: ",
    "One more thing: ",
    "Hello! ",
    "Help - ",
]
CLOSERS = [
    "",
    " Thanks.",
    " Thank you!",
    " Please be brief.",
    " (asking for my mother)",
    " Cheers.",
    " I couldn't find it online.",
    " Many thanks in advance.",
    " Is that right?",
]


def build_suite(count: int) -> dict:
    from assay.corpora import sample_data_path
    from assay.models import TestSuite

    sample = TestSuite.model_validate_json((sample_data_path() / "suite.json").read_text())
    base = [case for _, case in sample.cases()]
    variants = itertools.product(OPENERS, CLOSERS, base)
    cases = []
    for index, (opener, closer, case) in enumerate(itertools.islice(variants, count)):
        prompt = f"{opener}{case.prompt[0].lower() if opener else case.prompt[0]}{case.prompt[1:]}{closer}"
        cases.append(case.model_copy(update={"key": f"{case.key}-v{index:04d}", "prompt": prompt}))
    suite = TestSuite(name=f"bench {count} cases", tests=[{"key": "bench", "test_cases": cases}])
    return suite.model_dump(mode="json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--host", action="append", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("ASSAY_HOME", str(Path(folder) / "home"))
        from assay.apps.prefect_env import configure_prefect
        from assay.config import load_settings

        configure_prefect(load_settings())
        from assay.flows.evaluate import evaluate_flow

        suite_path = Path(folder) / "suite.json"
        suite_path.write_text(json.dumps(build_suite(args.cases)))
        out = Path(folder) / "out"
        started = time.perf_counter()
        summary = evaluate_flow(
            out=str(out), suite=str(suite_path), hosts=args.host or ["sample-rag"], evaluators=["all"]
        )
        total = time.perf_counter() - started
        lab = json.loads((out / "test_lab.json").read_text())
        durations = [row["actual_duration"] or 0.0 for row in lab["rows"]]
        print(
            f"cases: {summary['test_cases']} x {len(summary['models'])} model(s); evaluators run: "
            f"{len(summary['evaluators'])}, skipped: {len(summary['skipped_evaluators'])}"
        )
        print(f"host answering (sum of per-case durations): {sum(durations):8.1f} s")
        evaluator_total = 0.0
        for evaluator_id in summary["evaluators"]:
            elapsed = json.loads((out / evaluator_id / "results.json").read_text())["evaluator"]["elapsed_s"]
            evaluator_total += elapsed
            print(f"  {evaluator_id:45s} {elapsed:8.2f} s")
        for evaluator_id, reason in summary["skipped_evaluators"].items():
            print(f"  {evaluator_id:45s}  skipped: {reason}")
        print(f"evaluators (sum): {evaluator_total:8.1f} s")
        print(
            f"whole flow (wall, incl. Prefect start-up and model loading): {total:8.1f} s "
            f"= {summary['test_cases'] / total:.1f} cases/s"
        )


if __name__ == "__main__":
    main()
