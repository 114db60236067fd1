"""The host contract: turn test cases into test-lab rows, one system under test at a time.

``resolve`` owns everything hosts should not re-implement: bounded concurrency, per-call timeout, retries
with exponential backoff, timing, and recording a failure on its row instead of raising. A host only says
how to answer one case (``answer``) and may batch shared work for all cases first (``prepare``).

A host's credential (the value of the env var ``secret_ref`` names) is registered for redaction when the
host is created, and every row ``resolve`` returns has it redacted: an error body that echoes the key
("401: invalid key sk-...") would otherwise travel into checkpoints, results, problems and artifacts.
"""

import asyncio
import contextlib
import functools
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, TypeVar

from pydantic import Field, FiniteFloat, ValidationError

from assay.calls.breaker import CircuitBreaker, CircuitOpen
from assay.calls.errors import HostError, describe_error, error_kind
from assay.calls.limits import RateLimits
from assay.calls.pricing import cost_of, price_for
from assay.calls.retry import RetriesExhausted, call_with_policy
from assay.calls.tokens import TOKENIZER, count_tokens
from assay.embeddings.engine import Embedder
from assay.models import (
    CallPolicy,
    DomainModel,
    HostSpec,
    ModelHost,
    RetrievedChunk,
    TestCase,
    TestLabRow,
    ToolCall,
)
from assay.redaction import redact_data, register_env_secret


class HostAnswer(DomainModel):
    actual_output: str
    context: list[RetrievedChunk] = Field(default_factory=list)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cached_input_tokens: int | None = Field(
        default=None, ge=0, description="Of the input tokens, those the provider read from its prompt cache."
    )
    reasoning_tokens: int | None = Field(
        default=None, ge=0, description="Of the output tokens, those the model spent reasoning (not in the answer)."
    )
    cost: FiniteFloat | None = Field(default=None, ge=0)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    model_name: str | None = Field(default=None, description="The model name the server reported, if any.")
    raw_response: str | None = Field(default=None, description="The reply as received, for evidence.")
    duration: FiniteFloat | None = Field(
        default=None,
        ge=0,
        description="Seconds of work for this answer when done in a batch; else timed per call.",
    )


MAX_RAW_CHARS = 20_000
"""A raw reply kept in the lab as evidence is bounded too: enough to read what the server said."""


_T = TypeVar("_T")


class Host(ABC):
    """A system under test. A host type declares its metadata once, in ``spec``: its ``type`` and
    ``description`` are read from there. A class that declares only ``type`` and ``description`` (a test
    double) gets a minimal spec from ``host_spec``."""

    type: ClassVar[str]
    description: ClassVar[str]
    spec: ClassVar[HostSpec]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if isinstance(spec, HostSpec):  # a class that also declares ``type`` is checked against it at registration
            cls.type = cls.__dict__.get("type", spec.id)
            cls.description = cls.__dict__.get("description", spec.description)

    @classmethod
    def host_spec(cls) -> HostSpec:
        """The declared spec, else a minimal one derived from ``type`` and ``description``.

        Raises ``pydantic.ValidationError`` when the derived spec is invalid (e.g. a type that is not a slug).
        """
        declared = getattr(cls, "spec", None)
        if declared is not None:
            return declared
        return HostSpec(
            id=cls.type,
            display_name=cls.type,
            description=getattr(cls, "description", "") or cls.type,
            model_type="llm",
            protocol="Python (in process)",
        )

    def __init__(self, config: ModelHost, embedder: Callable[[], Embedder] | None = None) -> None:
        self.config = config
        self._embedder_factory = embedder
        self.case_tests: dict[str, str] = {}
        """The test each case of the current ``resolve`` belongs to (case key -> test key)."""
        self.test_documents: dict[str, list[str]] = {}
        """The documents of each test (test key -> ``Test.documents``), for hosts that index them per test."""
        self.policy: CallPolicy = CallPolicy().under(config.calls)
        """How the current ``resolve`` calls this host (its concurrency and time-out size ``blocking``)."""
        self._threads: ThreadPoolExecutor | None = None
        register_env_secret(config.secret_ref)

    async def blocking(self, function: Callable[..., _T], *args: Any) -> _T:
        """``function(*args)`` of a synchronous client library (boto3, h2ogpte), run on this host's own threads.

        Python's shared pool (``asyncio.to_thread``) has min(32, cores + 4) threads: on a small machine a host
        asked 16 at a time queued its calls there, and a call's time-out was spent waiting for a thread (the
        call was then never sent). The host's pool has a thread per call in flight, and as many again for calls
        still running after their time-out (a thread cannot be stopped)."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(
                max_workers=2 * self.policy.concurrency, thread_name_prefix=f"assay-host-{self.config.key}"
            )
        return await asyncio.get_running_loop().run_in_executor(self._threads, functools.partial(function, *args))

    def release_threads(self) -> None:
        """Let the host's threads go once a ``resolve`` is done (calls still running finish on their own)."""
        threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)

    def secret(self, required_for: str | None = None) -> str | None:
        """The credential ``secret_ref`` names, read from the environment now and never kept; ``None`` when the
        host file names none, unless ``required_for`` says what it is needed for. A named variable that is not
        set is a configuration error naming it."""
        name = self.config.secret_ref
        if not name:
            if required_for is None:
                return None
            raise HostError(f"host {self.config.key}: field 'secret_ref' ({required_for}) is required", "configuration")
        value = os.environ.get(name, "")
        if not value:
            raise HostError(
                f"host {self.config.key}: environment variable {name!r} (secret_ref) is not set", "configuration"
            )
        return value

    @property
    def embedder(self) -> Embedder:
        if self._embedder_factory is None:
            raise HostError(f"host {self.config.key} needs an embedding engine and none was given")
        return self._embedder_factory()

    async def prepare(self, cases: Sequence[TestCase]) -> None:  # noqa: B027 - optional hook
        """Batch work shared by all cases (embeddings, an index) before any ``answer`` call."""

    def circuit_breaker(self, policy: CallPolicy) -> CircuitBreaker:
        """This host's breaker: kept across the shards of a run (a dead host is not re-probed per shard),
        with a fresh lock for each event loop."""
        breaker = getattr(self, "_breaker", None)
        if breaker is None:
            breaker = CircuitBreaker(policy.breaker_failures, policy.breaker_cooldown_s, policy.breaker_max_pauses)
            self._breaker = breaker
        breaker.new_loop()
        return breaker

    def rate_limits(self, policy: CallPolicy) -> RateLimits:
        """This host's client-side rate limits, kept across the shards of a run like the breaker."""
        limits = getattr(self, "_rate_limits", None)
        if limits is None:
            limits = self._rate_limits = RateLimits(policy)
        return limits

    def sent_text(self, case: TestCase) -> str:
        """What a call for ``case`` sends, for counting tokens when the server reports none: the conversation
        turns and the prompt (hosts that send more, e.g. a system prompt, add it)."""
        system_prompt = self.config.settings.get("system_prompt")
        parts = [str(system_prompt)] if isinstance(system_prompt, str) and system_prompt else []
        return "\n".join([*parts, *(turn.content for turn in case.turns), case.prompt])

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the calls of one ``resolve`` shared (a connection pool); the default holds nothing."""

    @abstractmethod
    async def answer(self, case: TestCase) -> HostAnswer:
        """Answer one test case; raise ``HostError`` for failures that retrying cannot fix."""


def _tokens_used(answer: HostAnswer, estimated_input: int) -> int:
    """The call's tokens for the rate limit: the server's figures where it gave them, else counted."""
    sent = answer.input_tokens if answer.input_tokens is not None else estimated_input
    received = answer.output_tokens if answer.output_tokens is not None else count_tokens(answer.actual_output)
    return sent + received


def _redacted(row: TestLabRow) -> TestLabRow:
    """``row`` with every registered secret redacted from its texts (error, answer, context, tool calls)."""
    data = row.model_dump()
    clean = redact_data(data)
    return row if clean == data else TestLabRow.model_validate(clean)


async def resolve(
    host: Host,
    cases: Sequence[tuple[str, TestCase]],
    policy: CallPolicy | None = None,
    documents: Mapping[str, Sequence[str]] | None = None,
    on_row: Callable[[TestLabRow], None] | None = None,
) -> list[TestLabRow]:
    """Answer every (test key, case) pair; a row per case, in input order, failures recorded on the row.

    ``documents`` maps a test key to its ``Test.documents``, for hosts that build a collection per test.
    ``on_row`` is called with each row (secrets redacted) as soon as its case is done, in the order they finish,
    so a caller can checkpoint while slow calls are still in flight."""
    policy = host.policy = (policy or CallPolicy()).under(host.config.calls)
    model_key = host.config.key
    host.case_tests = {case.key: test_key for test_key, case in cases}
    host.test_documents = {key: list(value) for key, value in (documents or {}).items()}
    try:
        await host.prepare([case for _, case in cases])
    except Exception as error:
        reason = describe_error(f"host preparation failed: {type(error).__name__}: {error}")
        failed = [
            _redacted(
                TestLabRow(
                    test_case=case,
                    test_key=test_key,
                    model_key=model_key,
                    error=reason,
                    error_kind=error_kind(error),  # e.g. blocked_address: the host's address is refused
                    attempts=0,
                )
            )
            for test_key, case in cases
        ]
        for row in failed if on_row is not None else ():
            on_row(row)
        return failed
    semaphore = asyncio.Semaphore(policy.concurrency)
    breaker = host.circuit_breaker(policy)
    limits = host.rate_limits(policy)

    async def one(test_key: str, case: TestCase) -> TestLabRow:
        row = _redacted(await _row(test_key, case))
        if on_row is not None:
            on_row(row)
        return row

    async def _row(test_key: str, case: TestCase) -> TestLabRow:
        async with semaphore:
            estimate = count_tokens(host.sent_text(case)) if limits.counts_tokens else 0
            try:
                answer, duration, attempts = await call_with_policy(
                    lambda: host.answer(case),
                    policy,
                    breaker,
                    limits,
                    estimate,
                    lambda answer: _tokens_used(answer, estimate),
                )
            except HostError as error:
                return TestLabRow(
                    test_case=case,
                    test_key=test_key,
                    model_key=model_key,
                    error=describe_error(str(error)),
                    error_kind=error.kind,
                    attempts=error.attempts,
                )
            except CircuitOpen as paused:
                return TestLabRow(
                    test_case=case,
                    test_key=test_key,
                    model_key=model_key,
                    error=str(paused),
                    error_kind="circuit_open",
                    attempts=0,
                )
            except RetriesExhausted as failure:
                reason = describe_error(f"{type(failure.error).__name__}: {failure.error}")
                reason += f" (after {failure.attempts} attempts)"
                return TestLabRow(
                    test_case=case,
                    test_key=test_key,
                    model_key=model_key,
                    error=reason,
                    error_kind=error_kind(failure.error),
                    attempts=failure.attempts,
                )
        try:
            return answered_row(host, test_key, case, answer, duration, attempts)
        except ValidationError as error:  # e.g. a negative cost: recorded on its case, never aborting the run
            reason = describe_error(f"the host's answer is invalid: {error.errors()[0]['msg']}")
            return TestLabRow(
                test_case=case,
                test_key=test_key,
                model_key=model_key,
                error=reason,
                error_kind="invalid_answer",
                attempts=attempts,
            )

    try:
        rows = await asyncio.gather(*(one(test_key, case) for test_key, case in cases))
    finally:
        with contextlib.suppress(Exception):  # the answers are in; a failing clean-up must not lose them
            await host.close()
        host.release_threads()
    return rows


def answered_row(
    host: Host, test_key: str, case: TestCase, answer: HostAnswer, duration: float, attempts: int
) -> TestLabRow:
    """The row of an answered case; tokens the server did not report are counted, and a cost it did not report
    comes from the host file's price table, each saying so."""
    input_tokens, output_tokens, token_source = answer.input_tokens, answer.output_tokens, None
    if input_tokens is None or output_tokens is None:
        input_tokens = count_tokens(host.sent_text(case)) if input_tokens is None else input_tokens
        output_tokens = count_tokens(answer.actual_output) if output_tokens is None else output_tokens
        token_source = TOKENIZER
    cost, cost_source = answer.cost, "reported" if answer.cost is not None else None
    price = price_for(host.config.prices, answer.model_name, host.config.llm_model_name)
    if cost is None and price is not None:
        cost, cost_source = cost_of(price, input_tokens, output_tokens, answer.cached_input_tokens), "price_table"
    return TestLabRow(
        test_case=case,
        test_key=test_key,
        model_key=host.config.key,
        actual_output=answer.actual_output,
        context=answer.context,
        actual_duration=round(answer.duration if answer.duration is not None else duration, 6),
        cost=cost,
        cost_source=cost_source,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_input_tokens=answer.cached_input_tokens,
        reasoning_tokens=answer.reasoning_tokens,
        token_count_source=token_source,
        tool_calls=answer.tool_calls,
        attempts=attempts,
        model_name=answer.model_name,
        raw_response=None if answer.raw_response is None else describe_error(answer.raw_response, MAX_RAW_CHARS),
    )
