"""An Ollama server, through its native ``POST /api/chat`` and the ``ollama`` package.

``ModelHost.url`` is the server (``http://127.0.0.1:11434`` when empty), ``ModelHost.llm_model_name`` the model
(``llama3.2``). ``ModelHost.settings`` goes to ``AsyncClient.chat(**settings)`` as is (``options`` with
``temperature``/``num_ctx``/``seed``..., ``format``, ``keep_alive``, ``think``, ``tools``...), except the Assay
keys in ``ASSAY_KEYS``. Ollama needs no key; behind an authenticating proxy, ``secret_ref`` names the env var
holding a bearer token, read at call time and sent as the Authorization header, never stored.

The protocol is stateless: a case's conversation turns are sent as message history in one call. Tokens are
Ollama's ``prompt_eval_count``/``eval_count``; the raw reply (with its duration fields) is kept as evidence.
Retries are counted in one place (``resolve``): transient failures (429, 5xx, timeout, dropped connection)
raise ``RetryableHostError``; the others (auth, unknown model, malformed or empty reply) raise ``HostError``.
"""

import asyncio
import contextvars
import inspect
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx
import ollama

from assay.calls.errors import HostError, RetryableHostError
from assay.calls.guarded_http import guarded_options
from assay.calls.statuses import PERMANENT_KINDS, retry_after, status_kind, token_count
from assay.hosts.base import Host, HostAnswer
from assay.hosts.openai_chat import OpenAICompatible
from assay.models import HostSetting, HostSpec, TestCase, ToolCall

OLLAMA_URL = "http://127.0.0.1:11434"

ASSAY_KEYS = ("system_prompt", "headers", "timeout_s")
"""Settings Assay reads itself and does not pass to ``chat``."""

_REFUSED = ("model", "messages", "stream")
"""``chat`` parameters Assay sets itself: a setting with one of these names is a configuration error."""

_SETTINGS = [
    HostSetting(name="url", description="Base URL of the Ollama server (ModelHost.url).", default=OLLAMA_URL),
    HostSetting(
        name="llm_model_name",
        description="Model to ask, e.g. llama3.2 (ModelHost.llm_model_name); settings.model is moved here.",
        required=True,
        synonyms=["model"],
    ),
    HostSetting(
        name="secret_ref",
        description="Env var holding a bearer token for a proxy in front of Ollama (ModelHost.secret_ref); "
        "none: no Authorization header is added.",
        secret_reference=True,
    ),
    HostSetting(name="system_prompt", description="Assay key: a system message sent before the conversation."),
    HostSetting(name="headers", description="Assay key: extra HTTP headers (not secrets), e.g. for a proxy."),
    HostSetting(
        name="timeout_s",
        description="Assay key: the HTTP client's timeout in seconds (default: none; "
        "the run's call policy still bounds each call).",
    ),
    HostSetting(
        name="(any other)",
        description="Passed to ollama AsyncClient.chat as is: options (temperature, num_ctx, seed, num_predict...), "
        "format, keep_alive, think, tools...",
    ),
]


@dataclass
class _Reply:
    """The HTTP reply the client received for one call, captured by a response hook (the client keeps only
    the parsed model, and no headers on its errors)."""

    status: int = 0
    headers: httpx.Headers = field(default_factory=httpx.Headers)
    text: str | None = None


_REPLY: contextvars.ContextVar[_Reply | None] = contextvars.ContextVar("assay_ollama_reply", default=None)


async def _capture(response: httpx.Response) -> None:
    reply = _REPLY.get()
    if reply is None:
        return
    reply.status = response.status_code
    reply.headers = response.headers
    try:
        await response.aread()
        reply.text = response.text
    except HostError:  # a reply past hosts.max_reply_bytes: recorded as such, not as a dropped body
        raise
    except Exception:  # a dropped body: the client raises its own error right after
        reply.text = None


class _BearerFromEnv(httpx.Auth):
    """The Authorization header, from the env var ``secret_ref`` names, read for each request (never kept). With
    no ``secret_ref`` none is sent: not even the ``OLLAMA_API_KEY`` the ``ollama`` client picks up on its own,
    as a credential is used only when the host configuration names it."""

    def __init__(self, env_var: str | None) -> None:
        self.env_var = env_var

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        request.headers.pop("authorization", None)
        token = os.environ.get(self.env_var, "") if self.env_var else ""
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        yield request


def _chat_parameters() -> frozenset[str]:
    return frozenset(inspect.signature(ollama.AsyncClient.chat).parameters) - {"self"}


class Ollama(Host):
    spec: ClassVar[HostSpec] = HostSpec(
        id="ollama",
        display_name="Ollama",
        description="An Ollama server's native /api/chat (local models: llama3.2, mistral...), via ollama.",
        model_type="llm",
        protocol="Ollama /api/chat",
        settings=_SETTINGS,
        returns_tokens=True,
        returns_cost=False,  # cost: from the host file's price table
        multi_turn=True,
    )

    def _client(self) -> ollama.AsyncClient:
        if not self.config.llm_model_name:
            raise HostError(f"host {self.config.key}: field 'llm_model_name' (the model) is required", "configuration")
        settings = self.config.settings
        extra = settings.get("headers") or {}
        if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
            raise HostError(f"host {self.config.key}: setting 'headers' must map names to text", "configuration")
        if any(str(name).lower() == "authorization" for name in extra):
            raise HostError(
                f"host {self.config.key}: setting 'headers' may not hold an Authorization header; "
                "put the token in an environment variable and name it in 'secret_ref'",
                "configuration",
            )
        self.secret()  # a named variable that is unset fails here, before any call
        timeout = settings.get("timeout_s")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
            raise HostError(f"host {self.config.key}: setting 'timeout_s' must be a positive number", "configuration")
        headers = {str(name): value for name, value in extra.items()}
        identity = (asyncio.get_running_loop(), tuple(sorted(headers.items())), timeout, self.config.secret_ref)
        cached = getattr(self, "_cached_client", None)
        if cached is not None and cached[0] == identity:
            return cached[1]
        # One client per event loop (resolve runs one loop per shard), reusing its connection pool; the hook
        # keeps each reply's status, headers and body for the call that made it (a context variable per call).
        client = ollama.AsyncClient(
            host=self.config.url or OLLAMA_URL,
            headers=headers,
            timeout=timeout,
            auth=_BearerFromEnv(self.config.secret_ref),
            **guarded_options(True, event_hooks={"response": [_capture]}),
        )
        self._cached_client = (identity, client)
        return client

    def messages(self, case: TestCase) -> list[dict[str, str]]:
        """The system prompt (if any), the conversation turns, then the case's prompt as the last user turn."""
        return OpenAICompatible.messages(self, case)  # type: ignore[arg-type]  # reads only self.config

    def _chat_settings(self) -> dict[str, Any]:
        settings = {key: value for key, value in self.config.settings.items() if key not in ASSAY_KEYS}
        for name in settings:
            if name in _REFUSED:
                raise HostError(f"host {self.config.key}: setting {name!r} is set by Assay itself", "configuration")
            if name not in _chat_parameters():
                taken = ", ".join(sorted(_chat_parameters() - set(_REFUSED)))
                raise HostError(
                    f"host {self.config.key}: setting {name!r} is not taken by ollama's chat (takes: {taken})",
                    "configuration",
                )
        return settings

    async def answer(self, case: TestCase) -> HostAnswer:
        settings = self._chat_settings()
        client = self._client()
        reply = _Reply()
        token = _REPLY.set(reply)
        try:
            response = await client.chat(
                model=self.config.llm_model_name, messages=self.messages(case), stream=False, **settings
            )
        except ollama.ResponseError as error:
            status = error.status_code
            if status < 100:  # no HTTP status: an error inside a 200 reply
                raise HostError(f"the server reported an error: {error.error}", "other") from None
            kind = status_kind(status)
            message = f"HTTP {status} ({kind}): {error.error}"
            if kind in PERMANENT_KINDS:
                raise HostError(message, kind) from None
            raise RetryableHostError(message, kind, retry_after(reply)) from None
        except httpx.TimeoutException as error:
            raise RetryableHostError(f"timeout: {type(error).__name__}: {error}", "timeout") from None
        except (httpx.TransportError, ConnectionError) as error:
            raise RetryableHostError(f"connection failed: {type(error).__name__}: {error}", "connection") from None
        except (ValueError, TypeError) as error:  # non-JSON body, a JSON body that is not a chat reply
            body = reply.text if reply.text is not None else ""
            if reply.status and not body.lstrip().startswith(("{", "[")):
                raise HostError(f"the reply is not JSON: {body[:200]!r}", "malformed_response") from None
            detail = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise HostError(
                f"the reply is not a chat response ({detail}): {body[:200]!r}", "malformed_response"
            ) from None
        finally:
            _REPLY.reset(token)
        return self._parse(response, reply.text)

    def _parse(self, response: ollama.ChatResponse, body: str | None) -> HostAnswer:
        content = response.message.content
        if not content or not content.strip():
            raise HostError(
                f"the reply's answer is empty (done {response.done!r}, done_reason {response.done_reason!r})",
                "empty_answer",
            )
        input_tokens = token_count(response.prompt_eval_count)
        output_tokens = token_count(response.eval_count)
        tool_calls = [
            ToolCall(name=call.function.name, arguments=dict(call.function.arguments or {}))
            for call in response.message.tool_calls or []
        ]
        return HostAnswer(
            actual_output=content,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tool_calls=tool_calls,
            model_name=response.model or None,
            raw_response=body if body is not None else json.dumps(response.model_dump(exclude_none=True)),
        )

    async def close(self) -> None:
        cached = getattr(self, "_cached_client", None)
        if cached is not None:
            self._cached_client = None
            await cached[1].close()
