"""``azure-openai``: a chat model deployed on Microsoft Azure OpenAI, through ``openai.AsyncAzureOpenAI``.

The manual's parameters map to a ``ModelHost`` so: Host URL -> ``url`` (the Azure endpoint,
``https://RESOURCE.openai.azure.com``), API Key -> ``secret_ref`` (the env var holding it, read at call time),
Environment ID -> ``llm_model_name`` (the deployment name, "used as the LLM model name"), and the API version
-> ``settings.api_version`` (an Assay key, not passed on). The client calls
``POST {url}/openai/deployments/{deployment}/chat/completions?api-version=...`` with an ``api-key`` header; every
other setting goes to ``chat.completions.create`` as is. Parsing, error mapping and tokens are
``openai-compatible``'s (same protocol).
"""

import asyncio
from typing import ClassVar

import openai

from assay.calls.errors import HostError
from assay.calls.guarded_http import OPENAI_TIMEOUT, guarded_async_client
from assay.hosts.openai_chat import OpenAICompatible
from assay.models import HostSetting, HostSpec

API_VERSION_KEY = "api_version"

_SETTINGS = [
    HostSetting(
        name="url",
        description="Azure endpoint (Host URL), e.g. https://my-resource.openai.azure.com (ModelHost.url).",
        required=True,
    ),
    HostSetting(
        name="llm_model_name",
        description="The deployment name (the manual's Environment ID), used as the model (ModelHost.llm_model_name).",
        required=True,
    ),
    HostSetting(
        name="secret_ref",
        description="Env var holding the Azure API key, sent as the api-key header (ModelHost.secret_ref).",
        required=True,
        secret_reference=True,
    ),
    HostSetting(
        name=API_VERSION_KEY,
        description="Assay key: the Azure OpenAI API version, e.g. 2024-10-21 (sent as ?api-version=).",
        required=True,
    ),
    HostSetting(name="system_prompt", description="Assay key: a system message sent before the conversation."),
    HostSetting(
        name="(any other)",
        description="Passed to chat.completions.create as is: temperature, max_tokens, seed, top_p, extra_body...",
    ),
]


class AzureOpenAI(OpenAICompatible):
    assay_keys: ClassVar[tuple[str, ...]] = (*OpenAICompatible.assay_keys, API_VERSION_KEY)
    spec: ClassVar[HostSpec] = OpenAICompatible.spec.model_copy(
        update={
            "id": "azure-openai",
            "display_name": "Azure OpenAI chat",
            "description": (
                "A chat model deployed on Microsoft Azure OpenAI (endpoint, deployment = environment id, API version)."
            ),
            "protocol": "Azure OpenAI chat completions (/openai/deployments/{deployment}/chat/completions)",
            "settings": _SETTINGS,
            "same_protocol_as": "openai-compatible",
        }
    )

    def _client(self) -> openai.AsyncOpenAI:
        key = self.config.key
        if not self.config.url:
            raise HostError(f"host {key}: field 'url' (the Azure endpoint) is required", "configuration")
        if not self.config.llm_model_name:
            raise HostError(
                f"host {key}: field 'llm_model_name' (the deployment, the manual's Environment ID) is required",
                "configuration",
            )
        api_version = self.config.settings.get(API_VERSION_KEY)
        if not api_version or not isinstance(api_version, str):
            raise HostError(f"host {key}: setting 'api_version' (e.g. 2024-10-21) is required", "configuration")
        api_key = self.secret(required_for="env var with the Azure API key")
        loop = asyncio.get_running_loop()
        cached = getattr(self, "_cached_client", None)
        if cached is not None and cached[0] is loop and cached[1].api_key == api_key:
            return cached[1]
        client = openai.AsyncAzureOpenAI(
            azure_endpoint=self.config.url,
            azure_deployment=self.config.llm_model_name,
            api_version=api_version,
            api_key=api_key,
            max_retries=0,
            http_client=guarded_async_client(timeout=OPENAI_TIMEOUT),
        )
        self._cached_client = (loop, client)
        return client
