"""Prompt log-probabilities from the judge: what GPTScore needs instead of a verdict.

GPTScore reads how likely the judge model finds a continuation (the hypothesis after "In other words,") given
an instruction, so it asks the legacy completions route to echo the prompt with per-token log-probabilities
(``echo=True, logprobs=1``; OpenAI's base models, vLLM and llama.cpp servers offer it, chat-only endpoints do
not). The call goes through the judge client's retry loop, circuit breaker, rate limits, concurrency and
cache, like every chat verdict, and comes back as a ``JudgeCall`` whose verdict is ``{"tokens": n,
"mean_logprob": x}``; a failure is a ``JudgeCall`` with ``error`` set, never an exception.

Whether the endpoint offers log-probabilities at all is asked once per client (``logprobs_unavailable``),
so a chat-only judge makes every case unavailable with the reason instead of failing case by case.
"""

import json
import math
from typing import TYPE_CHECKING, Any

import openai

from assay.calls.errors import HostError, describe_error
from assay.calls.openai_errors import openai_failure
from assay.calls.statuses import token_count
from assay.calls.tokens import count_tokens
from assay.judges.cache import cache_key
from assay.judges.client import CallFailed, new_outcome
from assay.judges.templates import JudgeTemplate
from assay.models.judges import JudgeCall

if TYPE_CHECKING:
    from assay.judges.client import JudgeClient

NO_LOGPROBS = "unavailable: the judge endpoint gives no log-probabilities"
_PROBE_PREFIX = "Repeat the following text: the bank is open today. In other words,"
_PROBE_CONTINUATION = " the bank is open today."
_PROBE_ATTRIBUTE = "_logprobs_unavailable"
_UNSUPPORTED_KINDS = ("not_found", "client_error", "no_logprobs")
"""Failures that mean the endpoint cannot give prompt log-probabilities (no route, echo/logprobs refused)."""


def logprobs_unavailable(client: "JudgeClient") -> str | None:
    """Why ``client``'s endpoint cannot give prompt log-probabilities, or None; asked once per client.

    Only a missing or refused route, or a reply without log-probabilities, makes it unavailable: a transient
    failure of the probe (a 500, a time-out) leaves the cases to fail, or succeed, on their own."""
    if hasattr(client, _PROBE_ATTRIBUTE):
        return getattr(client, _PROBE_ATTRIBUTE)

    async def probe() -> JudgeCall:
        return await _fresh_call(client, _PROBE_PREFIX, _PROBE_CONTINUATION, 0)

    call = client.run(probe)
    reason = None
    if call.error_kind in _UNSUPPORTED_KINDS:
        reason = f"{NO_LOGPROBS} ({call.error})"
    setattr(client, _PROBE_ATTRIBUTE, reason)
    return reason


async def continuation_logprobs(
    client: "JudgeClient", template: JudgeTemplate, prefix: str, continuation: str, *, step: str = "", repeat: int = 0
) -> JudgeCall:
    """The mean log-probability the judge model gives the tokens of ``continuation`` after ``prefix``.

    ``template`` is the instruction the prompt was rendered from (its id and version go into the evidence and
    its content hash into the cache key). Tokens are chosen by their character offset, so a token that starts
    in the prefix (a space glued to the next word is part of the next token) is never counted."""
    prompt = prefix + continuation
    evidence = {
        "template": template.id,
        "template_version": template.version,
        "step": step,
        "model": client.endpoint.model,
        "messages": [{"role": "user", "content": describe_error(prompt, 20_000)}],
        "repeat": repeat,
        "structured_output": "logprobs",
    }
    key = cache_key(
        {
            "kind": "completions.logprobs",
            "model": client.endpoint.model,
            "template": [template.id, template.version, template.digest],
            "prompt": prompt,
            "scored_from": len(prefix),
            "settings": client.endpoint.settings,
            "repeat": repeat,
        }
    )
    if client.cache is not None and (entry := client.cache.get(key)) is not None:
        return JudgeCall(**evidence, **entry, cached=True)
    assert client.semaphore is not None, "continuation_logprobs must run inside JudgeClient.run"
    async with client.semaphore:
        outcome = await _outcome(client, prefix, continuation)
    call = JudgeCall(**evidence, **outcome)
    if client.cache is not None and call.error is None:
        client.cache.put(key, outcome)
    return call


async def _fresh_call(client: "JudgeClient", prefix: str, continuation: str, repeat: int) -> JudgeCall:
    """An uncached call outside any template (the probe)."""
    assert client.semaphore is not None
    async with client.semaphore:
        outcome = await _outcome(client, prefix, continuation)
    return JudgeCall(template="logprobs_probe", template_version="1", model=client.endpoint.model,
                     messages=[{"role": "user", "content": prefix + continuation}], repeat=repeat,
                     **outcome)  # fmt: skip


async def _outcome(client: "JudgeClient", prefix: str, continuation: str) -> dict[str, Any]:
    """The outcome fields of a ``JudgeCall``: verdict or error, the scored tokens as raw reply, usage, time."""
    prompt = prefix + continuation
    outcome = new_outcome()
    try:
        body, usage, model = await client.call(lambda: _complete(client, prompt), prompt, _tokens_used, outcome)
    except CallFailed as failure:
        return outcome | {"error": failure.message, "error_kind": failure.kind}
    input_tokens = token_count(usage.get("prompt_tokens")) or count_tokens(prompt)
    client.settle(outcome, model, input_tokens, token_count(usage.get("completion_tokens")) or 0)
    try:
        tokens, logprobs = scored_tokens(body, len(prefix), len(prompt))
    except CallFailed as failure:
        return outcome | {"raw_reply": describe_error(json.dumps(body)[:2000]), "error": failure.message,
                          "error_kind": failure.kind}  # fmt: skip
    outcome["raw_reply"] = describe_error(json.dumps({"tokens": tokens, "token_logprobs": logprobs}), 20_000)
    outcome["verdict"] = {"tokens": len(tokens), "mean_logprob": sum(logprobs) / len(logprobs)}
    return outcome


async def _complete(client: "JudgeClient", prompt: str) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    """One echo request: (the first choice's ``logprobs`` object, usage, model that answered)."""
    try:
        arguments = {**client.endpoint.settings, "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0.0}
        raw = await client.openai_client().completions.with_raw_response.create(
            model=client.endpoint.model, prompt=prompt, **arguments
        )
        text = raw.text
    except (openai.APIConnectionError, openai.APIStatusError) as error:
        raise openai_failure(error, "judge completions: ") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise HostError(f"judge completions: the reply is not JSON: {text[:200]!r}", "malformed_response") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise HostError("judge completions: the reply has no choices[0]", "malformed_response")
    logprobs = choices[0].get("logprobs")
    if not logprobs:
        raise HostError("judge completions: the reply carries no logprobs (echo/logprobs ignored)", "no_logprobs")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    model = data.get("model") if isinstance(data.get("model"), str) else None
    return logprobs, usage, model


def _tokens_used(reply: tuple[dict[str, Any], dict[str, Any], str | None]) -> int:
    return sum(token_count(reply[1].get(name)) or 0 for name in ("prompt_tokens", "completion_tokens"))


def scored_tokens(logprobs: Any, start: int, end: int) -> tuple[list[str], list[float]]:
    """The tokens (and their log-probabilities) whose character offset lies in [start, end): the continuation,
    without the prefix and without the token the server generated after the echoed prompt."""
    if not isinstance(logprobs, dict):
        raise CallFailed("judge completions: 'logprobs' is not an object", "unparseable")
    tokens, values, offsets = (logprobs.get(name) for name in ("tokens", "token_logprobs", "text_offset"))
    if not (isinstance(tokens, list) and isinstance(values, list) and isinstance(offsets, list)):
        raise CallFailed(
            "judge completions: 'logprobs' lacks the tokens, token_logprobs, text_offset lists", "unparseable"
        )
    if not len(tokens) == len(values) == len(offsets):
        raise CallFailed("judge completions: 'logprobs' lists differ in length", "unparseable")
    chosen: list[str] = []
    chosen_values: list[float] = []
    for token, value, offset in zip(tokens, values, offsets, strict=True):
        if not isinstance(offset, int) or not start <= offset < end:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value > 0:
            raise CallFailed(
                f"judge completions: token {token!r} has no usable log-probability ({value!r})", "unparseable"
            )
        chosen.append(str(token))
        chosen_values.append(float(value))
    if not chosen:
        raise CallFailed("judge completions: no token of the scored continuation in the reply's offsets", "unparseable")
    return chosen, chosen_values
