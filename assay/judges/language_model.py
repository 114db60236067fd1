"""The configured judge endpoint as a plain language model, for the MRM steps that need text written rather
than judged (LLM test generation, LLM contextual misinformation).

It implements ``assay.generation.LanguageModel`` (``complete(prompt, *, system, temperature) -> str``)
on a ``JudgeClient``, so a completion goes through the same retries, circuit breaker and rate limits as a
judge call, its reply is kept in the same content-addressed cache (a rerun of a generation step asks
nothing), and its tokens and cost are counted in a ``JudgeAccount``. The reply is free text: callers that
want JSON parse and validate it themselves, and fall back to their offline method when it does not do.
"""

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import openai

from assay.calls.openai_errors import openai_failure
from assay.calls.tokens import count_tokens
from assay.judges.cache import cache_key
from assay.judges.client import CallFailed, ChatReply, JudgeClient, bounded, new_outcome, parse_reply
from assay.models.judges import JudgeAccount, JudgeCall

COMPLETION = "completion"
"""The ``template`` name of a free-text completion in its ``JudgeCall`` evidence (no judge template is used)."""
_REFUSAL = "REFUSAL: "


class LanguageModelError(RuntimeError):
    """A completion that failed (time-out, HTTP error, refusal, breaker open...), with its failure kind."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class JudgeLanguageModel:
    """``complete`` and ``complete_many`` on the run's judge endpoint; ``account`` and ``calls`` say what the
    completions cost and what was asked (for the run's evidence)."""

    def __init__(self, client: JudgeClient) -> None:
        self.client = client
        self.account = JudgeAccount()
        self.calls: list[JudgeCall] = []

    @property
    def name(self) -> str:
        """The model that writes, recorded on every case it wrote."""
        return self.client.endpoint.model

    def complete(self, prompt: str, *, system: str = "", temperature: float = 0.0) -> str:
        """The reply's text; raises ``LanguageModelError`` when the endpoint gives none."""
        [reply] = self.complete_many([prompt], system=system, temperature=temperature)
        if isinstance(reply, LanguageModelError):
            raise reply
        return reply

    def complete_many(
        self, prompts: Sequence[str], *, system: str = "", temperature: float = 0.0
    ) -> list[str | LanguageModelError]:
        """One reply per prompt, in order, asked concurrently (up to the policy's concurrency). A failure comes
        back in its prompt's place instead of being raised, so one bad prompt never loses the others."""
        if not prompts:
            return []
        started = time.perf_counter()

        async def work() -> list[str | LanguageModelError]:
            semaphore = asyncio.Semaphore(self.client.policy.concurrency)
            asked = (self._one(semaphore, prompt, system, temperature) for prompt in prompts)
            return list(await asyncio.gather(*asked))

        try:
            return self.client.run(work)
        finally:
            self.account.wall_s = round(self.account.wall_s + time.perf_counter() - started, 6)

    async def _one(
        self, semaphore: asyncio.Semaphore, prompt: str, system: str, temperature: float
    ) -> str | LanguageModelError:
        endpoint = self.client.endpoint
        messages = [{"role": "system", "content": system}] if system.strip() else []
        messages.append({"role": "user", "content": prompt})
        evidence: dict[str, Any] = {
            "template": COMPLETION,
            "template_version": "1",
            "model": endpoint.model,
            "messages": [{**message, "content": bounded(message["content"])} for message in messages],
        }
        key = cache_key(
            {
                "kind": COMPLETION,
                "model": endpoint.model,
                "messages": messages,
                "temperature": temperature,
                "seed": endpoint.seed,
                "max_tokens": endpoint.max_tokens,
                "settings": endpoint.settings,
            }
        )
        cache = self.client.cache
        if cache is not None and (entry := cache.get(key)) is not None and isinstance(entry.get("text"), str):
            self._record(JudgeCall(**evidence, **_call_fields(entry), cached=True))
            return entry["text"]
        async with semaphore:
            outcome = await self._ask(messages, temperature)
        text = outcome.pop("text", None)
        call = JudgeCall(**evidence, **_call_fields(outcome))
        self._record(call)
        if text is None:
            return LanguageModelError(call.error or "no reply", call.error_kind or "other")
        if cache is not None:
            cache.put(key, {**outcome, "text": text})
        return text

    async def _ask(self, messages: list[dict[str, str]], temperature: float) -> dict[str, Any]:
        """The reply's text with its tokens, cost, time and attempts, or ``error`` and ``error_kind``."""
        client = self.client
        sent = "\n".join(message["content"] for message in messages)
        outcome = new_outcome()
        try:
            reply = await client.call(lambda: self._chat(messages, temperature), sent, ChatReply.tokens, outcome)
        except CallFailed as failure:
            return outcome | {"error": failure.message, "error_kind": failure.kind}
        input_tokens = reply.input_tokens if reply.input_tokens is not None else count_tokens(sent)
        output_tokens = reply.output_tokens if reply.output_tokens is not None else count_tokens(reply.content)
        client.settle(outcome, reply.model, input_tokens, output_tokens)
        outcome["raw_reply"] = bounded(reply.content)
        if reply.content.startswith(_REFUSAL):
            refusal = reply.content.removeprefix(_REFUSAL)
            return outcome | {"error": f"the model refused: {refusal}", "error_kind": "refusal"}
        return outcome | {"text": reply.content}

    async def _chat(self, messages: list[dict[str, str]], temperature: float) -> ChatReply:
        endpoint = self.client.endpoint
        arguments: dict[str, Any] = {"temperature": temperature, **endpoint.settings}
        if endpoint.seed is not None:
            arguments["seed"] = endpoint.seed
        if endpoint.max_tokens is not None:
            arguments["max_tokens"] = endpoint.max_tokens
        try:
            raw = await self.client.openai_client().chat.completions.with_raw_response.create(
                model=endpoint.model, messages=messages, **arguments
            )
            body = raw.text
        except (openai.APIConnectionError, openai.APIStatusError) as error:
            raise openai_failure(error, "language model: ") from None
        return parse_reply(body)

    def _record(self, call: JudgeCall) -> None:
        self.account.add(call)
        self.calls.append(call)


def _call_fields(outcome: dict[str, Any]) -> dict[str, Any]:
    """The ``JudgeCall`` fields of an outcome or cache entry (the full text stays out of the evidence)."""
    fields = ("raw_reply", "error", "error_kind", "input_tokens", "output_tokens", "cost", "latency_s", "attempts")
    found = {name: outcome[name] for name in fields if name in outcome}
    if "raw_reply" not in found and isinstance(outcome.get("text"), str):
        found["raw_reply"] = bounded(outcome["text"])
    return found
