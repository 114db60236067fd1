"""A circuit breaker per host: a system under test that keeps failing is paused, not hammered.

After ``failures_to_open`` consecutive failed calls the circuit opens: no call goes out for ``cooldown_s``,
then one probe call is let through (half-open). A success closes the circuit; a failure opens it again. After
``max_pauses`` openings the host is considered down for this run: the remaining calls are not made and their
cases are recorded as ``circuit_open``, so a rerun asks them again instead of a dead host burning through
every case's retries.
"""

import asyncio
import time


class CircuitOpen(Exception):
    """The host is paused: the call was not made."""


class CircuitBreaker:
    def __init__(self, failures_to_open: int, cooldown_s: float, max_pauses: int) -> None:
        self.failures_to_open = failures_to_open
        self.cooldown_s = cooldown_s
        self.max_pauses = max_pauses
        self.consecutive_failures = 0
        self.pauses = 0
        self.open_until: float | None = None
        self._probe = asyncio.Lock()

    def new_loop(self) -> None:
        """A lock for the event loop about to use the breaker (locks cannot cross loops); state is kept."""
        self._probe = asyncio.Lock()

    @property
    def enabled(self) -> bool:
        return self.failures_to_open > 0

    async def before_call(self) -> bool:
        """Wait while the circuit is open; returns True when this call is the half-open probe (the caller
        must then ``record`` its outcome before others go). Raises ``CircuitOpen`` when the host is down."""
        while self.enabled and self.open_until is not None:
            if self.pauses > self.max_pauses:
                raise CircuitOpen(self._reason())
            await asyncio.sleep(max(0.0, self.open_until - time.monotonic()))
            await self._probe.acquire()
            if self.open_until is not None and self.pauses <= self.max_pauses and time.monotonic() >= self.open_until:
                return True
            self._probe.release()  # closed by another probe, reopened (wait again) or down (raise above)
        return False

    def record(self, succeeded: bool, probe: bool) -> None:
        if not self.enabled:
            return
        if succeeded:
            self.consecutive_failures, self.open_until = 0, None
        else:
            self.consecutive_failures += 1
            if probe or (self.consecutive_failures >= self.failures_to_open and self.open_until is None):
                self.pauses += 1
                self.open_until = time.monotonic() + self.cooldown_s
        if probe:
            self._probe.release()

    def _reason(self) -> str:
        return (
            f"not asked: the host failed {self.failures_to_open} times in a row and stayed down after "
            f"{self.max_pauses} pauses of {self.cooldown_s:g}s (circuit open); a rerun asks again"
        )
