"""Client-side rate limits per host: requests and tokens per minute (leaky buckets from ``aiolimiter``).

A token budget cannot be known before the call, so each call first takes its estimate (the tokens of what it
sends) and, once the server has answered, settles the rest (the reported or counted total minus the estimate):
later calls wait for it. One call bigger than the whole minute's budget takes the whole budget.
"""

from aiolimiter import AsyncLimiter

from assay.models import CallPolicy


class RateLimits:
    def __init__(self, policy: CallPolicy) -> None:
        self.requests = None if policy.requests_per_minute is None else AsyncLimiter(policy.requests_per_minute, 60)
        self.tokens = None if policy.tokens_per_minute is None else AsyncLimiter(policy.tokens_per_minute, 60)

    @property
    def counts_tokens(self) -> bool:
        return self.tokens is not None

    async def before_call(self, estimated_tokens: int) -> None:
        if self.requests is not None:
            await self.requests.acquire()
        await self._take_tokens(estimated_tokens)

    async def after_call(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        if actual_tokens is not None and actual_tokens > estimated_tokens:
            await self._take_tokens(actual_tokens - estimated_tokens)

    async def _take_tokens(self, amount: int) -> None:
        if self.tokens is not None and amount > 0:
            await self.tokens.acquire(min(float(amount), self.tokens.max_rate))
