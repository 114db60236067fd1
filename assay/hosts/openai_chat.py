"""Hosts that speak the OpenAI chat completions protocol, through the ``openai`` package.

``openai-compatible`` is any server speaking ``POST {url}/chat/completions`` (vLLM, llama.cpp server,
LM Studio, LiteLLM proxy, TGI...); ``openai-chat`` is OpenAI itself: the same code, with OpenAI's base URL
when ``url`` is empty. ``ModelHost.llm_model_name`` is the model, ``ModelHost.secret_ref`` names the env var
holding the API key (read at call time, never stored), and ``ModelHost.settings`` goes to
``chat.completions.create(**settings)`` as is, except the Assay keys in ``assay_keys``. The cost comes from
the host file's price table (``ModelHost.prices``), applied by ``resolve``.

Retries are counted in one place (``resolve``): the client's own ``max_retries`` is 0. Permanent failures
(auth, unknown model, other 4xx, empty answer text, a JSON body of the wrong shape) raise ``HostError``;
transient ones (429, 5xx, timeout, dropped connection, a 200 body cut mid-JSON, an empty ``choices`` list) raise
``RetryableHostError`` so ``resolve`` retries them and records their kind.
"""

import asyncio
import json
from typing import ClassVar

import openai

from assay.calls.errors import HostError
from assay.calls.guarded_http import OPENAI_TIMEOUT, guarded_async_client
from assay.calls.openai_errors import no_choices, openai_failure, unreadable_reply
from assay.calls.statuses import token_count
from assay.hosts.base import Host, HostAnswer
from assay.models import HostSetting, HostSpec, TestCase

OPENAI_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "not-needed"
"""The key sent to a server that needs none: the client refuses to start without one."""


_SETTINGS = [
    HostSetting(name="url", description="Base URL of the API, e.g. http://127.0.0.1:8000/v1 (ModelHost.url)."),
    HostSetting(
        name="llm_model_name",
        description="Model to ask (ModelHost.llm_model_name); settings.model is accepted and moved here.",
        required=True,
        synonyms=["model"],
    ),
    HostSetting(
        name="secret_ref",
        description="Env var holding the API key (ModelHost.secret_ref); none: no key is needed.",
        secret_reference=True,
    ),
    HostSetting(name="system_prompt", description="Assay key: a system message sent before the conversation."),
    HostSetting(
        name="(any other)",
        description="Passed to chat.completions.create as is: temperature, max_tokens, seed, top_p, extra_body...",
    ),
]


class OpenAICompatible(Host):
    default_url: ClassVar[str] = ""
    assay_keys: ClassVar[tuple[str, ...]] = ("system_prompt",)
    """Settings Assay reads itself and does not pass to the client."""
    spec: ClassVar[HostSpec] = HostSpec(
        id="openai-compatible",
        display_name="OpenAI-compatible chat completions",
        description=(
            "Any server speaking OpenAI chat completions (vLLM, llama.cpp, LM Studio, LiteLLM, TGI), via openai."
        ),
        model_type="llm",
        protocol="OpenAI chat completions",
        settings=_SETTINGS,
        returns_tokens=True,
        returns_cost=False,  # cost: from the host file's price table
        multi_turn=True,
    )

    def _client(self) -> openai.AsyncOpenAI:
        url = self.config.url or self.default_url
        if not url:
            raise HostError(f"host {self.config.key}: field 'url' (base URL of the API) is required", "configuration")
        if not self.config.llm_model_name:
            raise HostError(f"host {self.config.key}: field 'llm_model_name' (the model) is required", "configuration")
        key = self.secret() or NO_KEY
        loop = asyncio.get_running_loop()
        cached = getattr(self, "_cached_client", None)
        if cached is not None and cached[0] is loop and cached[1].api_key == key:
            return cached[1]
        # One client per event loop (a lab's resolve runs in one loop): its connection pool is reused by every
        # call, instead of a new connection (and TLS handshake) per case.
        client = openai.AsyncOpenAI(
            base_url=url, api_key=key, max_retries=0, http_client=guarded_async_client(timeout=OPENAI_TIMEOUT)
        )
        self._cached_client = (loop, client)
        return client

    def messages(self, case: TestCase) -> list[dict[str, str]]:
        """The system prompt (if any), the conversation turns, then the case's prompt as the last user turn."""
        messages = []
        system_prompt = self.config.settings.get("system_prompt")
        if system_prompt:
            messages.append({"role": "system", "content": str(system_prompt)})
        messages.extend({"role": turn.role, "content": turn.content} for turn in case.turns)
        messages.append({"role": "user", "content": case.prompt})
        return messages

    async def answer(self, case: TestCase) -> HostAnswer:
        settings = {key: value for key, value in self.config.settings.items() if key not in self.assay_keys}
        client = self._client()
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model=self.config.llm_model_name, messages=self.messages(case), **settings
            )
            body = raw.text
        except (openai.APIConnectionError, openai.APIStatusError) as error:
            raise openai_failure(error) from None
        except TypeError as error:  # a setting the client does not take
            message = f"host {self.config.key}: settings rejected by the client: {error}"
            raise HostError(message, "configuration") from None
        return self._parse(body)

    async def close(self) -> None:
        cached = getattr(self, "_cached_client", None)
        if cached is not None:
            self._cached_client = None
            await cached[1].close()

    def _parse(self, body: str) -> HostAnswer:
        try:
            data = json.loads(body)
        except ValueError:
            raise unreadable_reply(body) from None
        if not isinstance(data, dict):
            raise HostError(f"the reply is not a JSON object: {body[:200]!r}", "malformed_response")
        choices = data.get("choices")
        if not isinstance(choices, list):
            raise HostError("the reply has no 'choices' list", "malformed_response")
        if not choices:
            raise no_choices()
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        if not isinstance(message, dict):
            raise HostError("the reply's choices[0] has no 'message' object", "malformed_response")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise HostError("the reply's choices[0].message.content is not text", "malformed_response")
        if not content or not content.strip():
            reason = choices[0].get("finish_reason")
            raise HostError(f"the reply's answer is empty (finish_reason {reason!r})", "empty_answer")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        input_tokens = token_count(usage.get("prompt_tokens"))
        output_tokens = token_count(usage.get("completion_tokens"))
        prompt_details, completion_details = usage.get("prompt_tokens_details"), usage.get("completion_tokens_details")
        model = data.get("model")
        return HostAnswer(
            actual_output=content,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_input_tokens=token_count(prompt_details.get("cached_tokens"))
            if isinstance(prompt_details, dict)
            else None,
            reasoning_tokens=token_count(completion_details.get("reasoning_tokens"))
            if isinstance(completion_details, dict)
            else None,
            model_name=model if isinstance(model, str) and model else None,
            raw_response=body,
        )


class OpenAIChat(OpenAICompatible):
    default_url: ClassVar[str] = OPENAI_BASE_URL
    spec: ClassVar[HostSpec] = OpenAICompatible.spec.model_copy(
        update={
            "id": "openai-chat",
            "display_name": "OpenAI chat completions",
            "description": "OpenAI's chat completions API (api.openai.com unless url says otherwise).",
            "same_protocol_as": "openai-compatible",
        }
    )


class H2OGPT(OpenAICompatible):
    """h2oGPT's OpenAI-compatible server (``/v1/chat/completions``): the manual's advanced settings for it are
    exactly chat completions' arguments, so the OpenAI-compatible implementation serves it unchanged."""

    spec: ClassVar[HostSpec] = OpenAICompatible.spec.model_copy(
        update={
            "id": "h2ogpt",
            "display_name": "h2oGPT LLM",
            "description": "h2oGPT through its OpenAI-compatible chat completions API (url: .../v1).",
            "same_protocol_as": "openai-compatible",
        }
    )


class H2OLLMOps(OpenAICompatible):
    """A model deployed with H2O LLMOps: its deployments serve OpenAI chat completions, and the manual's
    advanced settings for it are chat completions' arguments."""

    spec: ClassVar[HostSpec] = OpenAICompatible.spec.model_copy(
        update={
            "id": "h2o-llmops",
            "display_name": "H2O LLMOps",
            "description": "A model deployed with H2O LLMOps, through its OpenAI-compatible API (url: .../v1).",
            "same_protocol_as": "openai-compatible",
        }
    )
