"""The host contract: turn test cases into test-lab rows, one system under test at a time.

``resolve`` owns everything hosts should not re-implement: bounded concurrency, per-call timeout, retries
with exponential backoff, timing, and recording a failure on its row instead of raising. A host only says
how to answer one case (``answer``) and may batch shared work for all cases first (``prepare``).
"""

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from pydantic import Field

from assay.embeddings.engine import Embedder
from assay.models import DomainModel, ModelHost, RetrievedChunk, TestCase, TestLabRow, ToolCall


class HostAnswer(DomainModel):
    actual_output: str
    context: list[RetrievedChunk] = Field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    duration: float | None = Field(
        default=None,
        ge=0,
        description="Seconds of work for this answer when done in a batch; else timed per call.",
    )


class CallPolicy(DomainModel):
    concurrency: int = Field(default=4, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    retries: int = Field(default=2, ge=0)
    backoff_s: float = Field(default=0.5, ge=0)


class HostError(Exception):
    """A failure the host knows is permanent (bad request, missing answer): not retried."""


class Host(ABC):
    type: ClassVar[str]
    description: ClassVar[str]

    def __init__(self, config: ModelHost, embedder: Callable[[], Embedder] | None = None) -> None:
        self.config = config
        self._embedder_factory = embedder

    @property
    def embedder(self) -> Embedder:
        if self._embedder_factory is None:
            raise HostError(f"host {self.config.key} needs an embedding engine and none was given")
        return self._embedder_factory()

    async def prepare(self, cases: Sequence[TestCase]) -> None:  # noqa: B027 - optional hook
        """Batch work shared by all cases (embeddings, an index) before any ``answer`` call."""

    @abstractmethod
    async def answer(self, case: TestCase) -> HostAnswer:
        """Answer one test case; raise ``HostError`` for failures that retrying cannot fix."""


async def _attempt(
    call: Callable[[], Awaitable[HostAnswer]], policy: CallPolicy
) -> tuple[HostAnswer, float, int]:
    last_error: BaseException | None = None
    for attempt in range(policy.retries + 1):
        started = time.perf_counter()
        try:
            answer = await asyncio.wait_for(call(), timeout=policy.timeout_s)
            return answer, time.perf_counter() - started, attempt + 1
        except HostError:
            raise
        except TimeoutError:
            last_error = TimeoutError(f"no answer within {policy.timeout_s}s")
        except Exception as error:
            last_error = error
        if attempt < policy.retries:
            await asyncio.sleep(policy.backoff_s * 2**attempt)
    assert last_error is not None
    raise _RetriesExhausted(last_error, policy.retries + 1)


class _RetriesExhausted(Exception):
    def __init__(self, error: BaseException, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


async def resolve(
    host: Host, cases: Sequence[tuple[str, TestCase]], policy: CallPolicy | None = None
) -> list[TestLabRow]:
    """Answer every (test key, case) pair; a row per case, in input order, failures recorded on the row."""
    policy = policy or CallPolicy()
    model_key = host.config.key
    try:
        await host.prepare([case for _, case in cases])
    except Exception as error:
        reason = f"host preparation failed: {type(error).__name__}: {error}"
        return [
            TestLabRow(test_case=case, test_key=test_key, model_key=model_key, error=reason, attempts=0)
            for test_key, case in cases
        ]
    semaphore = asyncio.Semaphore(policy.concurrency)

    async def one(test_key: str, case: TestCase) -> TestLabRow:
        async with semaphore:
            try:
                answer, duration, attempts = await _attempt(lambda: host.answer(case), policy)
            except HostError as error:
                return TestLabRow(test_case=case, test_key=test_key, model_key=model_key, error=str(error))
            except _RetriesExhausted as failure:
                reason = (
                    f"{type(failure.error).__name__}: {failure.error} (after {failure.attempts} attempts)"
                )
                return TestLabRow(
                    test_case=case,
                    test_key=test_key,
                    model_key=model_key,
                    error=reason,
                    attempts=failure.attempts,
                )
        return TestLabRow(
            test_case=case,
            test_key=test_key,
            model_key=model_key,
            actual_output=answer.actual_output,
            context=answer.context,
            actual_duration=round(answer.duration if answer.duration is not None else duration, 6),
            cost=answer.cost,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            tool_calls=answer.tool_calls,
            attempts=attempts,
        )

    return list(await asyncio.gather(*(one(test_key, case) for test_key, case in cases)))
