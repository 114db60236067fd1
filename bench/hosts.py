"""Throughput of a chat-completions host against a local server that takes 200 ms per answer.

For each concurrency (1, 8, 32) the cases are answered through ``resolve`` (the same path as ``assay
evaluate``) with the real ``openai`` client. Printed: answers/s, the latency bound (concurrency / latency), the
ratio to that bound, and Assay's overhead per call (wall time per call minus the server's latency, at
concurrency 1). Goal: >= 25 answers/s at concurrency 32, within 1.3x of the bound.

Usage: python bench/hosts.py [--cases 1000] [--latency 0.2]
"""

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.hosts import CallPolicy, create_host, resolve
from assay.models import ModelHost, TestCase
from assay.testing.openai_server import OpenAIServer, serve_openai


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server takes per answer")
    parser.add_argument("--serial-cases", type=int, default=100, help="cases at concurrency 1 (200 ms each)")
    args = parser.parse_args()
    print(f"{'concurrency':>11} {'cases':>6} {'wall s':>7} {'answers/s':>10} {'bound/s':>8} {'bound/actual':>12}")
    with serve_openai(OpenAIServer(latency_s=args.latency)) as server:
        config = ModelHost(key="bench", type="openai-compatible", url=server.url, llm_model_name="local-model")
        for concurrency in (1, 8, 32):
            count = args.serial_cases if concurrency == 1 else args.cases
            cases = [("t", TestCase(key=f"c{i}", prompt=f"question {i}")) for i in range(count)]
            policy = CallPolicy(concurrency=concurrency, timeout_s=30, retries=0)
            started = time.perf_counter()
            rows = asyncio.run(resolve(create_host(config), cases, policy))
            wall = time.perf_counter() - started
            answered = sum(row.answered for row in rows)
            rate, bound = answered / wall, concurrency / args.latency
            print(f"{concurrency:>11} {count:>6} {wall:>7.1f} {rate:>10.1f} {bound:>8.1f} {bound / rate:>12.2f}")
            if concurrency == 1:
                print(f"{'':>11} overhead per call at concurrency 1: {1000 * (wall / count - args.latency):.1f} ms")
            if answered != count:
                print(f"{'':>11} {count - answered} cases not answered: {rows[0].error}")


if __name__ == "__main__":
    main()
