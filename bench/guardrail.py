"""Guardrail latency and throughput: ``python bench/guardrail.py [--requests N]`` (a script, not a test).

Starts ``assay guardrail serve`` with ``examples/guardrails.json`` on 127.0.0.1, sends answers of about 50,
100 and 200 words (each distinct, so answer sentences are always new; the retrieved context repeats, as it
does for a RAG system's popular documents) from 1, 4 and 16 concurrent clients, and prints p50/p95/p99
latency, throughput, and the ratio of the HTTP p50 to the in-process ``Guard.check`` p50 measured in the same
run, so the service's own overhead is visible. Goal (issue 25): p95 under 100 ms for a 100-word answer at
1 client on this 2-CPU machine, loaded as it is; the load average is printed first, since a comparison of
two runs means something only at similar loads. ``--concurrency 1 --words 100`` measures just that case.

``--large-kb 98`` then sends answers of that many kilobytes (distinct sentences), one alone and then four at
once, and prints each reply's status and seconds beside the service's time budget: the goal (issue 35) is a 503
within the budget + 1 s, never a verdict from a partial check.

The answers: each states the asker's amount, which the question gives, so every request's sentences are new to
the model while its claims stay supported; every third states a wrong rate. ``--answers FILE`` (JSON Lines with
``question``, ``context``, ``answer``) times real answers instead, each with its own context, e.g. the LLM
summaries of ``../shared/validity/faithbench_dev.jsonl`` (evaluation only: never copied here)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assay.guardrail import Client, GuardrailError  # noqa: E402
from assay.guardrail.checks import Guard  # noqa: E402

CONFIG = ROOT / "examples" / "guardrails.json"
CONTEXT = [
    "Easy Access Saver: balances from £10,000 to £49,999 earn 3.25% AER (3.20% gross p.a.). Interest is "
    "calculated daily and paid monthly. You can withdraw at any time without notice or penalty.",
    "The account can be opened online, in the app or in a branch by anyone aged 16 or over who lives in the UK. "
    "The minimum opening deposit is £1 and the maximum balance is £250,000.",
]
GOAL_P95_MS = {1: 100, 16: 500}
"""p95 goals for a 100-word answer, by concurrent clients (issue 35)."""
SENTENCE = "Balances from £10,000 to £49,999 earn 3.25% AER and interest is paid monthly, case {n}."
QUESTION = "What will the Easy Access Saver pay on my £{amount:,}?"
CLAIMS = (
    "On your £{amount:,} the Easy Access Saver pays 3.25% AER, which is 3.20% gross p.a.",
    "Interest on the £{amount:,} is calculated daily and paid monthly.",
    "You can withdraw any of the £{amount:,} at any time without notice or penalty.",
    "Balances from £10,000 to £49,999, such as your £{amount:,}, earn 3.25% AER.",
    "With £{amount:,} you stay under the maximum balance of £250,000.",
    "You can open the account online, in the app or in a branch and pay in the £{amount:,}.",
    "Anyone aged 16 or over who lives in the UK can open it with £{amount:,}, well above the £1 minimum.",
    "Interest on your £{amount:,} is worked out daily and paid into the account monthly.",
)
LEADS = ("", "Also, ", "In short, ", "To sum up, ", "Note that ")
WRONG = "On your £{amount:,} the Easy Access Saver pays 3.75% AER."


def question(n: int) -> str:
    return QUESTION.format(amount=_amount(n))


def _amount(n: int) -> int:
    return 10_000 + (n * 7_919) % 39_999


def answer(words: int, n: int) -> str:
    """A realistic answer about the asker's own balance: every sentence states the amount the question gives
    (supported framing), so each request's sentences are new to the model; every third answer states a wrong
    rate, so verdicts of both kinds are timed."""
    claims = [claim.format(amount=_amount(n)) for claim in CLAIMS]
    if n % 3 == 0:
        claims[0] = WRONG.format(amount=_amount(n))
    text: list[str] = []
    while len(" ".join(text).split()) < words:
        lead = LEADS[len(text) // len(claims) % len(LEADS)]
        claim = claims[len(text) % len(claims)]
        text.append(lead + claim[0].lower() + claim[1:] if lead else claim)
    return " ".join(text)


REQUESTS: list[dict] = []
"""Real answers to time (``--answers``), used in turn; none: the generated ones."""


def request(words: int, n: int) -> tuple[str, str, list[str]]:
    """The n-th request's question, answer and context."""
    if not REQUESTS:
        return question(n), answer(words, n), CONTEXT
    row = REQUESTS[n % len(REQUESTS)]
    context = row["context"] if isinstance(row["context"], list) else [row["context"]]
    return row.get("question") or "", row["answer"], context


def large_answer(kilobytes: int, n: int) -> str:
    """About ``kilobytes`` KB of distinct claims (every sentence new, so each one reaches the model)."""
    text, sentence = [], 0
    while sum(len(part) + 1 for part in text) < kilobytes * 1000:
        text.append(SENTENCE.format(n=n * 100_000 + sentence))
        sentence += 1
    return " ".join(text)


def timed_check(url: str, text: str) -> tuple[str, float]:
    """The reply's status (200 with the verdict, or the error status) and the seconds it took."""
    started = time.perf_counter()
    with Client(url, timeout=600) as client:
        try:
            status = f"200 {client.check(question(0), text, CONTEXT).verdict}"
        except GuardrailError as error:
            status = str(error.status)
    return status, time.perf_counter() - started


def large_answers(url: str, kilobytes: int, budget_s: float) -> None:
    alone = timed_check(url, large_answer(kilobytes, 1))
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda n: timed_check(url, large_answer(kilobytes, n)), range(2, 6)))
    for label, (status, seconds) in [("alone", alone), *((f"4 at once #{i}", r) for i, r in enumerate(together, 1))]:
        held = seconds <= budget_s + 1 and (status == "503" or status.startswith("200"))
        print(f"{kilobytes} KB answer, {label}: {status} in {seconds:.2f} s (budget {budget_s:g} s; goal: a whole "
              f"verdict or 503 within {budget_s + 1:g} s: {'met' if held else 'MISSED'})")


def percentiles(values: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=60, help="Requests per (concurrency, length).")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16], help="Concurrent clients.")
    parser.add_argument("--words", type=int, nargs="+", default=[50, 100, 200], help="Answer lengths in words.")
    parser.add_argument("--large-kb", type=int, default=98, help="Size of the over-budget answers (0: skip them).")
    parser.add_argument("--config", type=Path, default=CONFIG, help="Guardrail configuration to serve.")
    parser.add_argument("--workers", type=int, default=1, help="Service worker processes (serve --workers).")
    parser.add_argument("--answers", type=Path, help="JSON Lines of question/context/answer to time instead.")
    args = parser.parse_args()
    if args.answers:
        global REQUESTS
        REQUESTS = [json.loads(line) for line in args.answers.read_text(encoding="utf-8").splitlines() if line]
        args.words = [0]
    print(f"load average {' '.join(f'{load:.2f}' for load in os.getloadavg())} on {os.cpu_count()} CPUs")
    guard = Guard.from_path(args.config)
    guard.warm_up()
    baseline = {}
    for words in args.words:
        times = []
        for n in range(args.requests):
            started = time.perf_counter()
            guard.check(*request(words, 10_000 + n))
            times.append((time.perf_counter() - started) * 1000)
        baseline[words] = percentiles(times)
        label = f"{words:>3} words" if words else "file answers"
        print(f"in-process Guard.check {label}: p50 {baseline[words][0]:6.1f} ms  "
              f"p95 {baseline[words][1]:6.1f}  p99 {baseline[words][2]:6.1f}")  # fmt: skip
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "assay.apps.cli.main", "guardrail", "serve", "--config", str(args.config),
         "--port", str(port), "--workers", str(args.workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=os.environ.copy(),
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        with Client(url) as probe:
            while not probe.ready():
                time.sleep(0.2)
        counter = iter(range(10**9))
        for concurrency in args.concurrency:
            for words in args.words:
                clients = [Client(url) for _ in range(concurrency)]

                refused: list[int] = []

                def one(index: int, words: int = words, clients: list[Client] = clients, refused: list = refused) -> float:  # noqa: E501
                    started = time.perf_counter()
                    try:
                        clients[index % len(clients)].check(*request(words, next(counter)))
                    except GuardrailError as error:  # shed (503) or over budget: counted, timed like the rest
                        refused.append(error.status)
                    return (time.perf_counter() - started) * 1000

                started = time.perf_counter()
                with ThreadPoolExecutor(concurrency) as pool:
                    latencies = list(pool.map(one, range(args.requests)))
                elapsed = time.perf_counter() - started
                p50, p95, p99 = percentiles(latencies)
                limit = GOAL_P95_MS.get(concurrency)
                goal = "" if limit is None else "(p95 goal met)" if p95 <= limit else f"(p95 over the {limit} ms goal)"
                label = f"{words:>3} words" if words else "file answers"
                print(f"http c={concurrency:>2} {label}: p50 {p50:6.1f} ms  p95 {p95:6.1f}  p99 {p99:6.1f}  "
                      f"{args.requests / elapsed:6.1f} req/s  p50 ratio vs in-process {p50 / baseline[words][0]:4.2f}x "
                      f"{goal}" + (f"  {len(refused)} refused {sorted(set(refused))}" if refused else ""))  # fmt: skip
                for client in clients:
                    client.close()
        if args.large_kb:
            large_answers(url, args.large_kb, guard.config.limits.check_budget_s)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
