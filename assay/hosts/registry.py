"""Host registry: host type -> class, its declared metadata, and the default configurations of the built-ins."""

from collections.abc import Callable

from pydantic import ValidationError

from assay.embeddings.engine import Embedder
from assay.hosts.azure_openai import AzureOpenAI
from assay.hosts.base import Host
from assay.hosts.bedrock_kb import BedrockKnowledgeBase
from assay.hosts.h2ogpte import H2OGPTeLLM, H2OGPTeRAG
from assay.hosts.http_rag import HttpRag
from assay.hosts.ollama import Ollama
from assay.hosts.openai_assistants import OpenAIAssistants
from assay.hosts.openai_chat import H2OGPT, H2OLLMOps, OpenAIChat, OpenAICompatible
from assay.hosts.sample_rag import SampleRag, SampleRagKeyword
from assay.hosts.testlab import TestLabHost
from assay.models import HostSpec, ModelHost

_REGISTRY: dict[str, type[Host]] = {}


def _validated_spec(cls: type[Host]) -> HostSpec:
    name = f"host class {cls.__module__}.{cls.__qualname__}"
    host_type = getattr(cls, "type", None)
    if not isinstance(host_type, str) or not host_type:
        raise ValueError(f"{name}: declares no 'type'")
    try:
        spec = cls.host_spec()
        spec = HostSpec.model_validate(dict(spec))  # a spec built with model_construct is checked too
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "spec"
        raise ValueError(f"{name}: invalid spec field {field!r}: {first['msg']}") from None
    if spec.id != host_type:
        raise ValueError(f"{name}: spec.id {spec.id!r} differs from its type {host_type!r}")
    names = [setting.name for setting in spec.settings]
    duplicates = sorted({setting for setting in names if names.count(setting) > 1})
    if duplicates:
        raise ValueError(f"{name}: spec.settings names {', '.join(duplicates)} more than once")
    if spec.same_protocol_as is not None and spec.same_protocol_as == spec.id:
        raise ValueError(f"{name}: spec.same_protocol_as names the host type itself")
    return spec


def register_host(cls: type[Host]) -> type[Host]:
    """Add a host class to the registry after checking its metadata; a clear ``ValueError`` otherwise."""
    spec = _validated_spec(cls)
    if spec.id in _REGISTRY and _REGISTRY[spec.id] is not cls:
        raise ValueError(f"host type {spec.id!r} is registered twice")
    _REGISTRY[spec.id] = cls
    return cls


BUILTIN_HOSTS: tuple[type[Host], ...] = (
    SampleRag,
    SampleRagKeyword,
    TestLabHost,
    OpenAICompatible,
    OpenAIChat,
    HttpRag,
    AzureOpenAI,
    OpenAIAssistants,
    H2OGPT,
    H2OLLMOps,
    Ollama,
    BedrockKnowledgeBase,
    H2OGPTeRAG,
    H2OGPTeLLM,
)
for _builtin in BUILTIN_HOSTS:
    register_host(_builtin)

_DEFAULT_NAMES = {
    "sample-rag": "Sample RAG (embedding retrieval)",
    "sample-rag-keyword": "Sample RAG (keyword retrieval)",
}


def host_types() -> list[str]:
    return sorted(_REGISTRY)


def host_class(host_type: str) -> type[Host]:
    try:
        return _REGISTRY[host_type]
    except KeyError:
        raise ValueError(f"unknown host type {host_type!r}; known types: {', '.join(host_types())}") from None


def host_spec(host_type: str) -> HostSpec:
    """The metadata of a registered host type."""
    return host_class(host_type).host_spec()


def host_specs() -> list[HostSpec]:
    return [host_spec(host_type) for host_type in host_types()]


def default_host_config(host_type: str) -> ModelHost:
    """The configuration ``--host TYPE`` means: key and type are the type name, default settings."""
    host_class(host_type)
    return ModelHost(key=host_type, type=host_type, name=_DEFAULT_NAMES.get(host_type, host_type))


def create_host(config: ModelHost, embedder: Callable[[], Embedder] | None = None) -> Host:
    return host_class(config.type)(config, embedder)
