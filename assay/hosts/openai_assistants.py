"""``openai-assistants``: an existing OpenAI Assistant with the file search tool, through the ``openai`` package.

Per case: create a thread holding the case's earlier conversation turns (the Assistants API takes user AND
assistant messages in a thread; system and tool turns have no place there and are left out), add the prompt,
create a run of ``settings.assistant_id`` and poll it to a terminal state, read the assistant's reply (messages
of that run, newest first) and the retrieved context from the run steps, asked with
``include=["step_details.tool_calls[*].file_search.results[*].content"]``: each file search result becomes a
``RetrievedChunk`` (text, doc_uri = file name or file id, score, rank in the order returned). The thread is
deleted afterwards (best effort).

A run that did not search, or whose search found nothing, still records its answer with an EMPTY context: that
is the manual's "empty retrieved contexts" limitation of Assistants v2, and evaluators needing context then
judge the answer alone. Tokens come from ``run.usage``; cost from the Assay price keys.

In the installed ``openai`` (3.x) the Assistants API (``client.beta.threads``) is still there but marked
deprecated in favour of the Responses API; its DeprecationWarnings are silenced here.
"""

import asyncio
import contextlib
import json
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, ClassVar, TypeVar

import openai

from assay.calls.errors import HostError, RetryableHostError
from assay.calls.guarded_http import OPENAI_TIMEOUT, guarded_async_client
from assay.calls.openai_errors import openai_failure
from assay.calls.statuses import token_count
from assay.hosts.base import Host, HostAnswer
from assay.hosts.openai_chat import NO_KEY, OPENAI_BASE_URL
from assay.models import HostSetting, HostSpec, RetrievedChunk, TestCase

FILE_SEARCH_CONTENT = "step_details.tool_calls[*].file_search.results[*].content"
ASSAY_KEYS = ("assistant_id", "thread_kwargs", "poll_interval_s")
"""Settings Assay reads itself; every other one goes to ``runs.create`` as is."""

DEFAULT_POLL_INTERVAL_S = 0.5
_T = TypeVar("_T")

_SETTINGS = [
    HostSetting(name="url", description="Base URL of the API; empty: https://api.openai.com/v1 (ModelHost.url)."),
    HostSetting(
        name="secret_ref",
        description="Env var holding the OpenAI API key (ModelHost.secret_ref); none: no key is sent.",
        secret_reference=True,
    ),
    HostSetting(name="assistant_id", description="The existing Assistant to ask (asst_...).", required=True),
    HostSetting(name="thread_kwargs", description="Assay key: a dict passed to threads.create as is (metadata...)."),
    HostSetting(
        name="poll_interval_s",
        description="Assay key: seconds between two polls of a run.",
        default=DEFAULT_POLL_INTERVAL_S,
    ),
    HostSetting(
        name="(any other)",
        description="Passed to threads.runs.create as is: instructions, additional_instructions, model, "
        "temperature, max_completion_tokens, tools, metadata, extra_body...",
    ),
]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


async def _call(call: Callable[[], Awaitable[_T]], what: str) -> _T:
    """One API call, its failures mapped to Assay's kinds (as ``openai-compatible`` maps them)."""
    try:
        with _quiet():
            awaitable = call()
        return await awaitable
    except (openai.APIConnectionError, openai.APIStatusError) as error:
        raise openai_failure(error, f"{what}: ") from None
    except json.JSONDecodeError as error:  # a 200 body cut mid-JSON: retried, as a 5xx is
        message = f"{what}: the reply is not valid JSON (cut short?): {error}"
        raise RetryableHostError(message, "malformed_response") from None
    except (openai.APIResponseValidationError, ValueError) as error:  # JSON, but not the API's
        raise HostError(f"{what}: the reply is not valid JSON of the API: {error}", "malformed_response") from None
    except TypeError as error:  # a setting the client does not take
        raise HostError(f"{what}: settings rejected by the client: {error}", "configuration") from None


class OpenAIAssistants(Host):
    spec: ClassVar[HostSpec] = HostSpec(
        id="openai-assistants",
        display_name="OpenAI Assistants with file search",
        description="An existing OpenAI Assistant with file search (threads and runs), via openai.",
        model_type="rag",
        protocol="OpenAI Assistants API v2 (threads, runs, run steps)",
        settings=_SETTINGS,
        returns_context=True,
        returns_tokens=True,
        returns_cost=False,  # cost: from the host file's price table
        multi_turn=True,
    )

    def _client(self) -> openai.AsyncOpenAI:
        url = self.config.url or OPENAI_BASE_URL
        key = self.secret() or NO_KEY
        loop = asyncio.get_running_loop()
        cached = getattr(self, "_cached_client", None)
        if cached is not None and cached[0] is loop and cached[1].api_key == key:
            return cached[1]
        client = openai.AsyncOpenAI(
            base_url=url, api_key=key, max_retries=0, http_client=guarded_async_client(timeout=OPENAI_TIMEOUT)
        )
        self._cached_client = (loop, client)
        return client

    def _settings(self) -> tuple[str, dict[str, Any], float, dict[str, Any]]:
        settings = self.config.settings
        assistant_id = settings.get("assistant_id")
        if not isinstance(assistant_id, str) or not assistant_id:
            raise HostError(f"host {self.config.key}: setting 'assistant_id' (asst_...) is required", "configuration")
        thread_kwargs = settings.get("thread_kwargs") or {}
        if not isinstance(thread_kwargs, dict):
            raise HostError(f"host {self.config.key}: setting 'thread_kwargs' must be an object", "configuration")
        interval = settings.get("poll_interval_s", DEFAULT_POLL_INTERVAL_S)
        if isinstance(interval, bool) or not isinstance(interval, int | float) or interval < 0:
            raise HostError(f"host {self.config.key}: setting 'poll_interval_s' must be a number >= 0",
                            "configuration")  # fmt: skip
        run_kwargs = {key: value for key, value in settings.items() if key not in ASSAY_KEYS}
        return assistant_id, thread_kwargs, float(interval), run_kwargs

    async def answer(self, case: TestCase) -> HostAnswer:
        assistant_id, thread_kwargs, interval, run_kwargs = self._settings()
        client = self._client()
        threads = client.beta.threads
        history = [{"role": turn.role, "content": turn.content} for turn in case.turns
                   if turn.role in ("user", "assistant")]  # fmt: skip
        thread = await _call(lambda: threads.create(messages=history, **thread_kwargs), "create thread")
        try:
            await _call(lambda: threads.messages.create(thread.id, role="user", content=case.prompt), "add prompt")
            run = await _call(
                lambda: threads.runs.create(thread_id=thread.id, assistant_id=assistant_id, **run_kwargs), "create run"
            )
            run_id = run.id
            while run.status in ("queued", "in_progress", "cancelling"):
                await asyncio.sleep(interval)
                run = await _call(lambda: threads.runs.retrieve(run_id, thread_id=thread.id), "poll run")
            self._check_status(run)
            messages = await _call(
                lambda: threads.messages.list(thread.id, run_id=run.id, order="desc"), "list messages"
            )
            steps = await _call(
                lambda: threads.runs.steps.list(run.id, thread_id=thread.id, include=[FILE_SEARCH_CONTENT], limit=100),
                "list run steps",
            )
        finally:
            with contextlib.suppress(Exception):
                await _call(lambda: threads.delete(thread.id), "delete thread")
        reply = next((message for message in messages.data if message.role == "assistant"), None)
        text = "" if reply is None else "".join(
            block.text.value for block in reply.content if getattr(block, "type", None) == "text"
        )  # fmt: skip
        if not text.strip():
            raise HostError(f"run {run.id} completed without an assistant answer", "empty_answer")
        context = self._context(steps.data)
        usage = run.usage
        input_tokens = token_count(usage.prompt_tokens) if usage else None
        output_tokens = token_count(usage.completion_tokens) if usage else None
        transcript = [*history, {"role": "user", "content": case.prompt}, {"role": "assistant", "content": text}]
        raw = {"transcript": transcript, "run": run.model_dump(mode="json"),
               "steps": [step.model_dump(mode="json") for step in steps.data]}  # fmt: skip
        return HostAnswer(
            actual_output=text,
            context=context,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model_name=run.model or None,
            raw_response=json.dumps(raw),
        )

    @staticmethod
    def _check_status(run: Any) -> None:
        status = run.status
        if status == "completed":
            return
        if status == "failed":
            error = run.last_error
            code = getattr(error, "code", None)
            message = f"run {run.id} failed ({code}): {getattr(error, 'message', '')}"
            if code == "rate_limit_exceeded":
                raise RetryableHostError(message, "rate_limited")
            if code == "server_error":
                raise RetryableHostError(message, "server_error")
            raise HostError(message, "client_error")
        if status in ("expired", "cancelled"):
            raise RetryableHostError(f"run {run.id} {status} before it answered", "timeout")
        if status == "incomplete":
            reason = getattr(run.incomplete_details, "reason", None)
            raise HostError(f"run {run.id} is incomplete ({reason})", "empty_answer")
        if status == "requires_action":
            raise HostError(f"run {run.id} requires action (a function tool call Assay cannot answer)",
                            "client_error")  # fmt: skip
        raise HostError(f"run {run.id} ended with unknown status {status!r}", "malformed_response")

    @staticmethod
    def _context(steps: list[Any]) -> list[RetrievedChunk]:
        chunks: list[RetrievedChunk] = []
        for step in sorted(steps, key=lambda step: step.created_at):
            if getattr(step.step_details, "type", None) != "tool_calls":
                continue
            for call in step.step_details.tool_calls:
                if getattr(call, "type", None) != "file_search":
                    continue
                for result in call.file_search.results or []:
                    text = "".join(part.text or "" for part in result.content or [])
                    chunks.append(
                        RetrievedChunk(
                            text=text, doc_uri=result.file_name or result.file_id, rank=len(chunks), score=result.score
                        )
                    )
        return chunks

    async def close(self) -> None:
        cached = getattr(self, "_cached_client", None)
        if cached is not None:
            self._cached_client = None
            await cached[1].close()
