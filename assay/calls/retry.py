"""One call under a ``CallPolicy``: circuit breaker, rate limits, time-out, retries with full-jitter backoff
that honours the server's ``Retry-After``. Used for every host answer and every judge call."""

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from assay.calls.breaker import CircuitBreaker
from assay.calls.errors import HostError
from assay.calls.limits import RateLimits
from assay.models import CallPolicy

T = TypeVar("T")


class RetriesExhausted(Exception):
    """Every attempt failed in a retryable way; ``error`` is the last failure."""

    def __init__(self, error: BaseException, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


def retry_delay(policy: CallPolicy, attempt: int, error: BaseException) -> float:
    """Exponential backoff with full jitter (clients that failed together do not retry together), or the
    server's ``Retry-After`` when it asks for longer, up to ``max_retry_after_s``."""
    backoff = random.uniform(0.0, policy.backoff_s * 2**attempt)
    advised = getattr(error, "retry_after", None)
    if isinstance(advised, int | float) and advised > 0:
        return max(backoff, min(float(advised), policy.max_retry_after_s))
    return backoff


async def call_with_policy(
    call: Callable[[], Awaitable[T]],
    policy: CallPolicy,
    breaker: CircuitBreaker,
    limits: RateLimits,
    estimated_tokens: int,
    tokens_used: Callable[[T], int],
) -> tuple[T, float, int]:
    """(result, seconds the successful attempt took, attempts made). A ``HostError`` is raised at once with its
    ``attempts`` set; ``RetriesExhausted`` when every retryable attempt failed; ``CircuitOpen`` when the
    server is considered down. ``tokens_used`` settles the token budget once a call has answered."""
    last_error: BaseException | None = None
    for attempt in range(policy.retries + 1):
        probe = await breaker.before_call()
        await limits.before_call(estimated_tokens)
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(call(), timeout=policy.timeout_s)
            breaker.record(True, probe)
            if limits.counts_tokens:
                await limits.after_call(estimated_tokens, tokens_used(result))
            return result, time.perf_counter() - started, attempt + 1
        except HostError as refusal:
            breaker.record(True, probe)  # the server answered, with a permanent refusal: it is not down
            refusal.attempts = attempt + 1
            raise
        except TimeoutError:
            breaker.record(False, probe)
            last_error = TimeoutError(f"no answer within {policy.timeout_s}s")
        except Exception as error:
            breaker.record(False, probe)
            last_error = error
        if attempt < policy.retries:
            await asyncio.sleep(retry_delay(policy, attempt, last_error))
    assert last_error is not None
    raise RetriesExhausted(last_error, policy.retries + 1)
