"""The judge client: any OpenAI-compatible chat endpoint, through the ``openai`` package.

Calls go through the same retry loop, circuit breaker and rate limits as the systems under test
(``assay.calls``). Every reply is parsed strictly against the template's JSON schema; a reply that does not
parse gets one repair request, then the case is unscored with the reason (kind ``unparseable``). A judge
failure never raises out of ``ask``: it comes back as a ``JudgeCall`` with ``error`` set, so the evaluator
marks that case unscored and the run goes on.
"""

import asyncio
import concurrent.futures
import json
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import openai

from assay.calls.breaker import CircuitBreaker, CircuitOpen
from assay.calls.errors import HostError, describe_error, error_kind
from assay.calls.guarded_http import OPENAI_TIMEOUT, guarded_async_client
from assay.calls.limits import RateLimits
from assay.calls.openai_errors import no_choices, openai_failure, unreadable_reply
from assay.calls.pricing import cost_of, price_for
from assay.calls.retry import RetriesExhausted, call_with_policy
from assay.calls.statuses import token_count
from assay.calls.tokens import count_tokens
from assay.judges import NOT_CONFIGURED
from assay.judges.cache import JudgeCache, cache_key, endpoint_scope
from assay.judges.templates import FENCE_VERSION, JudgeTemplate, fence_boundary
from assay.models import CallPolicy
from assay.models.judges import JudgeCall, JudgeEndpoint, StructuredOutput
from assay.redaction import register_env_secret

T = TypeVar("T")
MAX_EVIDENCE_CHARS = 20_000
NO_KEY = "not-needed"
_FENCED = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


def bounded(text: str) -> str:
    return describe_error(text, MAX_EVIDENCE_CHARS)


@dataclass
class ChatReply:
    content: str
    input_tokens: int | None
    output_tokens: int | None
    model: str | None

    def tokens(self) -> int:
        return (self.input_tokens or 0) + (self.output_tokens or 0)


class JudgeClient:
    """One judge endpoint for one run. ``run`` executes a batch of ``ask`` calls in its own event loop."""

    def __init__(self, endpoint: JudgeEndpoint, cache: JudgeCache | None = None, policy: CallPolicy | None = None):
        self.endpoint = endpoint
        self.cache = None if cache is None else cache.scoped(endpoint_scope(endpoint))
        self.policy = (policy or CallPolicy(concurrency=8)).under(endpoint.calls)
        self.breaker = CircuitBreaker(
            self.policy.breaker_failures, self.policy.breaker_cooldown_s, self.policy.breaker_max_pauses
        )
        self.limits = RateLimits(self.policy)
        self.mode: StructuredOutput = endpoint.structured_output
        self._client: openai.AsyncOpenAI | None = None
        self.semaphore: asyncio.Semaphore | None = None
        register_env_secret(endpoint.api_key_env)

    def unavailable_reason(self) -> str | None:
        """Why no case can be judged here (no endpoint, the key's variable unset); None when the judge can run."""
        if not self.endpoint.configured:
            return NOT_CONFIGURED
        name = self.endpoint.api_key_env
        if name and not os.environ.get(name):
            return f"unavailable: the judge's API key variable {name!r} (api_key_env) is not set"
        return None

    # -- running a batch -------------------------------------------------------------------------------------

    def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` (a coroutine function making ``ask`` calls) to completion in a fresh event loop, in a
        worker thread when this thread already runs one."""

        async def main() -> T:
            self.breaker.new_loop()
            self.semaphore = asyncio.Semaphore(self.policy.concurrency)
            try:
                return await work()
            finally:
                client, self._client = self._client, None
                if client is not None:
                    await client.close()

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(main())
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, main()).result()

    def openai_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            name = self.endpoint.api_key_env
            key = (os.environ.get(name) if name else None) or NO_KEY
            if self.endpoint.azure_api_version:
                self._client = openai.AsyncAzureOpenAI(
                    azure_endpoint=self.endpoint.base_url,
                    api_key=key,
                    api_version=self.endpoint.azure_api_version,
                    max_retries=0,
                    http_client=guarded_async_client(timeout=OPENAI_TIMEOUT),
                )
            else:
                self._client = openai.AsyncOpenAI(
                    base_url=self.endpoint.base_url,
                    api_key=key,
                    max_retries=0,
                    http_client=guarded_async_client(timeout=OPENAI_TIMEOUT),
                )
        return self._client

    # -- one question ----------------------------------------------------------------------------------------

    async def ask(
        self, template: JudgeTemplate, variables: dict[str, Any], *, step: str = "", repeat: int = 0
    ) -> JudgeCall:
        """The judge's verdict on one filled template, from the cache when it was asked before.

        The inputs are fenced with a boundary drawn for this request, so the cache key is built from the
        template and the inputs, not from the rendered text; the endpoint is in the cache's scope."""
        boundary = fence_boundary(str(value) for value in variables.values())
        messages = _with_schema(template.render(variables, boundary), template)
        evidence = {
            "template": template.id,
            "template_version": template.version,
            "step": step,
            "model": self.endpoint.model,
            "messages": [{**message, "content": bounded(message["content"])} for message in messages],
            "repeat": repeat,
        }
        key = cache_key(
            {
                "model": self.endpoint.model,
                "template": [template.id, template.version, template.digest],
                "fence": FENCE_VERSION,
                "inputs": variables,
                "temperature": self.endpoint.temperature,
                "seed": None if self.endpoint.seed is None else self.endpoint.seed + repeat,
                "max_tokens": self.endpoint.max_tokens,
                "settings": self.endpoint.settings,
                "repeat": repeat,
            }
        )
        if self.cache is not None and (entry := self.cache.get(key)) is not None:
            return JudgeCall(**evidence, **entry, cached=True)
        outcome = await self._judged(template, messages, repeat)
        call = JudgeCall(**evidence, **outcome)
        if self.cache is not None and call.error is None:
            self.cache.put(key, outcome)
        return call

    async def _judged(self, template: JudgeTemplate, messages: list[dict[str, str]], repeat: int) -> dict[str, Any]:
        """The outcome fields of a ``JudgeCall``: verdict or error, raw reply, tokens, cost, time, attempts."""
        assert self.semaphore is not None, "JudgeClient.ask must run inside JudgeClient.run"
        outcome = new_outcome()
        conversation = list(messages)
        async with self.semaphore:
            for round_ in range(2):  # the question, then at most one repair request
                mode = self.mode
                try:
                    reply = await self._call(template, conversation, repeat, outcome)
                except CallFailed as failure:
                    if failure.kind == "client_error" and mode == "auto" and self.mode == "auto":
                        self.mode = "prompt"  # the server refuses response_format: the schema is in the prompt
                        try:
                            reply = await self._call(template, conversation, repeat, outcome)
                        except CallFailed as again:
                            return outcome | {"error": again.message, "error_kind": again.kind}
                    else:
                        return outcome | {"error": failure.message, "error_kind": failure.kind}
                outcome["structured_output"] = self._effective_mode()
                outcome["raw_reply"] = bounded(reply.content)
                verdict, problem = parse_verdict(reply.content, template)
                if problem is None:
                    return outcome | {"verdict": verdict, "repaired": round_ == 1}
                if round_ == 1 or problem.startswith("refusal"):
                    kind = "refusal" if problem.startswith("refusal") else "unparseable"
                    return outcome | {"error": f"judge template {template.id}: {problem}", "error_kind": kind}
                conversation = [*conversation, {"role": "assistant", "content": reply.content},
                                {"role": "user", "content": _repair_request(problem)}]  # fmt: skip
        raise AssertionError("unreachable")

    def _effective_mode(self) -> str:
        return "json_schema" if self.mode == "auto" else self.mode

    async def _call(
        self, template: JudgeTemplate, messages: list[dict[str, str]], repeat: int, outcome: dict[str, Any]
    ) -> ChatReply:
        sent = "\n".join(message["content"] for message in messages)
        reply = await self.call(lambda: self._complete(template, messages, repeat), sent, ChatReply.tokens, outcome)
        input_tokens = reply.input_tokens if reply.input_tokens is not None else count_tokens(sent)
        output_tokens = reply.output_tokens if reply.output_tokens is not None else count_tokens(reply.content)
        self.settle(outcome, reply.model, input_tokens, output_tokens)
        return reply

    async def call(
        self, request: Callable[[], Awaitable[T]], sent: str, tokens_used: Callable[[T], int], outcome: dict[str, Any]
    ) -> T:
        """One request to the endpoint under the client's call policy (breaker, rate limits, time-out, retries),
        shared by every kind of judge request. Adds its attempts and time to ``outcome``; a failure retries did
        not cure raises ``CallFailed`` with its kind."""
        estimate = count_tokens(sent) if self.limits.counts_tokens else 0
        try:
            result, latency, attempts = await call_with_policy(
                request, self.policy, self.breaker, self.limits, estimate, tokens_used
            )
        except HostError as error:
            outcome["attempts"] += error.attempts
            raise CallFailed(describe_error(str(error)), error.kind) from None
        except CircuitOpen as paused:
            raise CallFailed(str(paused), "circuit_open") from None
        except RetriesExhausted as failure:
            outcome["attempts"] += failure.attempts
            message = describe_error(f"{type(failure.error).__name__}: {failure.error}")
            raise CallFailed(f"{message} (after {failure.attempts} attempts)", error_kind(failure.error)) from None
        outcome["attempts"] += attempts
        outcome["latency_s"] = round(outcome["latency_s"] + latency, 6)
        return result

    def settle(self, outcome: dict[str, Any], model: str | None, input_tokens: int, output_tokens: int) -> None:
        """Add one answered request's tokens to ``outcome``, and their cost where the price table has the model."""
        outcome["input_tokens"] += input_tokens
        outcome["output_tokens"] += output_tokens
        price = price_for(self.endpoint.prices, model, self.endpoint.model)
        if price is not None:
            outcome["cost"] = round((outcome.get("cost") or 0.0) + cost_of(price, input_tokens, output_tokens), 8)

    async def _complete(self, template: JudgeTemplate, messages: list[dict[str, str]], repeat: int) -> ChatReply:
        endpoint = self.endpoint
        arguments: dict[str, Any] = {"temperature": endpoint.temperature, **endpoint.settings}
        if endpoint.seed is not None:
            arguments["seed"] = endpoint.seed + repeat
        if endpoint.max_tokens is not None:
            arguments["max_tokens"] = endpoint.max_tokens
        mode = self.mode
        if mode in ("auto", "json_schema"):
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": template.id, "schema": template.schema, "strict": False},
            }
        elif mode == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        elif mode == "tool":
            arguments["tools"] = [{"type": "function", "function": {"name": template.id,
                                   "description": template.description, "parameters": template.schema}}]  # fmt: skip
            arguments["tool_choice"] = {"type": "function", "function": {"name": template.id}}
        try:
            raw = await self.openai_client().chat.completions.with_raw_response.create(
                model=endpoint.model, messages=messages, **arguments
            )
            body = raw.text
        except (openai.APIConnectionError, openai.APIStatusError) as error:
            raise openai_failure(error, "judge: ") from None
        return parse_reply(body)


def new_outcome() -> dict[str, Any]:
    """The outcome fields of a ``JudgeCall`` before any request: nothing spent yet."""
    return {"input_tokens": 0, "output_tokens": 0, "attempts": 0, "latency_s": 0.0}


class CallFailed(Exception):
    """A judge request that gave no answer (retries did not cure it), with its failure kind."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


def _with_schema(messages: list[dict[str, str]], template: JudgeTemplate) -> list[dict[str, str]]:
    """The rendered messages with the reply's JSON schema spelled out at the end of the user message, so a
    server that ignores ``response_format`` still knows the shape wanted."""
    schema = json.dumps(template.schema, ensure_ascii=False)
    instruction = f"\n\nReply with only a JSON object that matches this JSON schema:\n{schema}"
    return [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + instruction}]


def _repair_request(problem: str) -> str:
    return (
        f"Your reply could not be used: {problem}. Reply again with only the JSON object, matching the schema "
        "given above, and nothing else."
    )


def parse_reply(body: str) -> ChatReply:
    """The judge's text (message content or forced tool call's arguments) and usage from a chat completion."""
    try:
        data = json.loads(body)
    except ValueError:
        raise unreadable_reply(body, "judge: ") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        raise HostError("judge: the reply has no 'choices' list", "malformed_response")
    if not choices:
        raise no_choices("judge: ")
    if not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        raise HostError("judge: the reply has no choices[0].message", "empty_answer")
    message = choices[0]["message"]
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    model = data.get("model") if isinstance(data.get("model"), str) else None
    reply = ChatReply("", token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens")), model)
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        reply.content = f"REFUSAL: {refusal}"
        return reply
    if choices[0].get("finish_reason") == "content_filter":
        reply.content = "REFUSAL: the endpoint's content filter stopped the reply"
        return reply
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        arguments = (tool_calls[0].get("function") or {}).get("arguments") if isinstance(tool_calls[0], dict) else None
        reply.content = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return reply
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise HostError(
            f"judge: the reply's answer is empty (finish_reason {choices[0].get('finish_reason')!r})", "empty_answer"
        )
    reply.content = content
    return reply


def parse_verdict(text: str, template: JudgeTemplate) -> tuple[dict[str, Any] | None, str | None]:
    """(verdict, None) when ``text`` is one JSON object valid for the template's schema (a fenced ```json
    block is accepted), else (None, what is wrong)."""
    if text.startswith("REFUSAL: "):
        return None, f"refusal: {text.removeprefix('REFUSAL: ')[:300]}"
    candidate = text.strip()
    fenced = _FENCED.search(candidate)
    if fenced:
        candidate = fenced.group(1)
    try:
        verdict = json.loads(candidate)
    except ValueError as error:
        return None, f"the reply is not JSON ({error.msg} at character {error.pos}): {text[:200]!r}"
    if not isinstance(verdict, dict):
        return None, f"the reply is JSON but not an object: {text[:200]!r}"
    errors = sorted(template.validator().iter_errors(verdict), key=lambda error: list(error.path))
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.path) or "(root)"
        return None, f"the reply does not match the schema at {where}: {first.message[:300]}"
    return verdict, None


def open_judge(endpoint: JudgeEndpoint, cache_dir: "os.PathLike[str] | str | None") -> JudgeClient | None:
    """The run's judge client with its cache folder, or None when ``endpoint`` is not configured."""
    from pathlib import Path

    if not endpoint.configured:
        return None
    return JudgeClient(endpoint, JudgeCache(Path(cache_dir)) if cache_dir is not None else None)
