"""What a host file says about calling its host (``calls``: concurrency, requests and tokens per minute) and
pricing it (``prices``) is applied by ``resolve``; tokens a server does not report are counted, and both the
counted tokens and a table-priced cost say where they came from."""

import asyncio
import time
from typing import ClassVar

import pytest

from assay.calls.tokens import TOKENIZER, count_tokens
from assay.hosts import Host, HostAnswer, resolve
from assay.models import CallPolicy, ModelHost, TestCase


class CountingHost(Host):
    """Answers every case, tracking calls in flight; reports tokens only when the prompt asks it to."""

    type: ClassVar[str] = "limits-double"
    description: ClassVar[str] = "test double"

    def __init__(self, config: ModelHost) -> None:
        super().__init__(config)
        self.active = 0
        self.max_active = 0
        self.calls = 0

    async def answer(self, case: TestCase) -> HostAnswer:
        self.calls += 1
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(0.01)
            if case.prompt == "reports":
                return HostAnswer(actual_output="four words answer here", input_tokens=11, output_tokens=4,
                                  model_name="served-model")  # fmt: skip
            if case.prompt == "costs":
                return HostAnswer(actual_output="ok", cost=0.5, model_name="served-model")
            return HostAnswer(actual_output="The quick brown fox jumps over the lazy dog.", model_name="served-model")
        finally:
            self.active -= 1


def _cases(count: int, prompt: str = "What are the opening hours of the Zurich branch?") -> list[tuple[str, TestCase]]:
    return [("t", TestCase(key=f"c{i}", prompt=prompt)) for i in range(count)]


def test_the_host_files_concurrency_wins_over_the_runs_policy() -> None:
    host = CountingHost(ModelHost(key="h", type="limits-double", calls=CallPolicy(concurrency=1)))
    rows = asyncio.run(resolve(host, _cases(8), CallPolicy(concurrency=8, retries=0)))
    assert all(row.answered for row in rows)
    assert host.max_active == 1
    unlimited = CountingHost(ModelHost(key="h", type="limits-double"))
    asyncio.run(resolve(unlimited, _cases(8), CallPolicy(concurrency=8, retries=0)))
    assert unlimited.max_active > 1


def test_only_the_fields_a_host_file_sets_override_the_run() -> None:
    config = ModelHost.model_validate({"key": "h", "type": "x", "calls": {"requests_per_minute": 30}})
    merged = CallPolicy(concurrency=9, retries=5).under(config.calls)
    assert (merged.concurrency, merged.retries, merged.requests_per_minute) == (9, 5, 30)


@pytest.mark.timeout(30)
def test_requests_per_minute_holds_calls_back_once_the_burst_is_spent() -> None:
    # 120 requests per minute: a burst of 120, then one every 0.5 s; 123 calls need at least ~1.5 s.
    host = CountingHost(ModelHost(key="h", type="limits-double", calls=CallPolicy(requests_per_minute=120)))
    started = time.perf_counter()
    rows = asyncio.run(resolve(host, _cases(123), CallPolicy(concurrency=32, retries=0)))
    assert all(row.answered for row in rows)
    assert time.perf_counter() - started >= 1.2


@pytest.mark.timeout(30)
def test_tokens_per_minute_counts_what_is_sent_and_received() -> None:
    # Each call takes its prompt's tokens before and settles its answer's after. A budget of 60 calls a minute
    # lets 60 go at once, then one a second: 62 calls need about 2 s.
    prompt = "What are the opening hours of the Zurich branch?"
    per_call = count_tokens(prompt) + count_tokens("The quick brown fox jumps over the lazy dog.")
    budget = per_call * 60
    host = CountingHost(ModelHost(key="h", type="limits-double", calls=CallPolicy(tokens_per_minute=budget)))
    started = time.perf_counter()
    rows = asyncio.run(resolve(host, _cases(62, prompt), CallPolicy(concurrency=16, retries=0)))
    assert all(row.answered for row in rows)
    assert time.perf_counter() - started >= 1.0


def test_tokens_the_server_does_not_report_are_counted_and_labelled() -> None:
    host = CountingHost(ModelHost(key="h", type="limits-double"))
    counted, reported = asyncio.run(resolve(host, [*_cases(1), ("t", TestCase(key="r", prompt="reports"))]))
    assert counted.input_tokens == count_tokens(counted.test_case.prompt) > 0
    assert counted.output_tokens == count_tokens("The quick brown fox jumps over the lazy dog.") == 10
    assert counted.token_count_source == TOKENIZER
    assert (reported.input_tokens, reported.output_tokens, reported.token_count_source) == (11, 4, None)


def test_cost_comes_from_the_price_table_by_the_served_model_and_says_so() -> None:
    prices = {"served-model": {"input_per_1k": 1.0, "output_per_1k": 2.0}, "*": {"input_per_1k": 9, "output_per_1k": 9}}
    host = CountingHost(ModelHost(key="h", type="limits-double", llm_model_name="configured", prices=prices))
    table, server = asyncio.run(resolve(host, [("t", TestCase(key="a", prompt="reports")),
                                               ("t", TestCase(key="b", prompt="costs"))]))  # fmt: skip
    assert table.cost == pytest.approx(11 / 1000 * 1.0 + 4 / 1000 * 2.0) and table.cost_source == "price_table"
    assert server.cost == 0.5 and server.cost_source == "reported"  # the server's own figure is kept
    unpriced = CountingHost(ModelHost(key="h", type="limits-double"))
    [row] = asyncio.run(resolve(unpriced, _cases(1)))
    assert row.cost is None and row.cost_source is None  # no table, no reported cost: unknown, not zero


def test_a_price_table_entry_must_be_a_price() -> None:
    with pytest.raises(ValueError, match="input_per_1k"):
        ModelHost.model_validate({"key": "h", "type": "x", "prices": {"m": {"output_per_1k": 1}}})
