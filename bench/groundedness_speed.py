"""Speed of the default ``groundedness`` on RAG cases: ``python bench/groundedness_speed.py [--cases 1000]``.

Each case has 5 retrieved passages (drawn from a pool of passages, as a RAG system's popular documents come
back again) and a 3-claim answer whose sentences are all distinct. Cold: a fresh process, no embedding cache,
the entailment model loaded inside the timed part. Printed beside it, measured in the same run on the same
texts: the time to embed every distinct text once (the floor of anything embedding-bound here), and the ratio.
Goal (issue 33): 1,000 cases in at most 3 minutes on the project's 2-core machine.
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assay.evaluators import CaseContext, Services, build_evaluator  # noqa: E402
from assay.evaluators.base import Unscored  # noqa: E402

from assay.embeddings import EmbeddingEngine  # noqa: E402
from assay.embeddings.engine import PACKAGED_MODEL  # noqa: E402

PRODUCTS = ["Easy Access Saver", "Fixed Rate Bond", "Cash ISA", "Regular Saver", "Notice Account", "Current Account"]
FACTS = [
    "{p} pays {r}% AER on balances from £{a:,} to £{b:,}, and interest is calculated daily and paid monthly.",
    "You can open the {p} online, in the app or in a branch if you are {age} or over and live in the UK.",
    "Withdrawals from the {p} are free, but more than {n} withdrawals a year reduce the rate to {low}% AER.",
    "The {p} can be closed at any time; the balance is paid to your nominated account within {d} working days.",
    "Customers with the {p} get a statement every {m} months and can switch to paperless statements in the app.",
]


def passages(rng: random.Random, count: int) -> list[str]:
    pool = []
    for index in range(count):
        product = f"{rng.choice(PRODUCTS)} {index}"
        values = {
            "p": product, "r": round(rng.uniform(1, 5), 2), "a": rng.randrange(1, 50) * 1000,
            "b": rng.randrange(51, 250) * 1000, "age": rng.choice([16, 18, 21]), "n": rng.randrange(2, 9),
            "low": round(rng.uniform(0.1, 1), 2), "d": rng.randrange(2, 7), "m": rng.choice([1, 3, 6, 12]),
        }  # fmt: skip
        pool.append(" ".join(fact.format(**values) for fact in rng.sample(FACTS, 3)))
    return pool


def build_cases(count: int, seed: int = 7) -> list[CaseContext]:
    rng = random.Random(seed)
    pool = passages(rng, max(50, count // 4))
    cases = []
    for index in range(count):
        context = rng.sample(pool, 5)
        sentences = [sentence for passage in context[:2] for sentence in passage.split(". ")]
        claims = [sentence.rstrip(".") + f" (case {index})." for sentence in rng.sample(sentences, 3)]
        cases.append(CaseContext.build(test_case_key=f"case-{index}", question=f"Question {index}?",
                                       retrieved_context=context, actual_output=" ".join(claims)))  # fmt: skip
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    args = parser.parse_args()
    cases = build_cases(args.cases)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.cases} cases x 5 passages, 3-claim answers")
    started = time.perf_counter()
    engine = EmbeddingEngine(PACKAGED_MODEL)
    evaluator = build_evaluator("groundedness", Services(embedder_factory=lambda: engine))
    evaluator.prepare(cases)
    scored = 0
    for case in cases:
        try:
            evaluator.score(case)
            scored += 1
        except Unscored:
            pass
    seconds = time.perf_counter() - started
    texts = {text for case in cases for text in (case.actual_output or "", *(c.text for c in case.retrieved_context))}
    floor_started = time.perf_counter()
    EmbeddingEngine(PACKAGED_MODEL).embed(sorted(texts))
    floor = time.perf_counter() - floor_started
    print(f"groundedness: {scored} scored in {seconds:.1f} s ({args.cases / seconds:.1f} cases/s); goal <= 180 s "
          f"for 1,000")  # fmt: skip
    print(f"floor (embed the {len(texts)} distinct answers and passages once): {floor:.1f} s; "
          f"ratio {seconds / floor:.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
