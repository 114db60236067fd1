"""Host registry: host type -> class, and the default configurations of the built-in hosts."""

from collections.abc import Callable

from assay.embeddings.engine import Embedder
from assay.hosts.base import Host
from assay.hosts.sample_rag import SampleRag, SampleRagKeyword
from assay.hosts.testlab import TestLabHost
from assay.models import ModelHost

_REGISTRY: dict[str, type[Host]] = {}


def register_host(cls: type[Host]) -> type[Host]:
    if cls.type in _REGISTRY and _REGISTRY[cls.type] is not cls:
        raise ValueError(f"host type {cls.type!r} is registered twice")
    _REGISTRY[cls.type] = cls
    return cls


for _builtin in (SampleRag, SampleRagKeyword, TestLabHost):
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


def default_host_config(host_type: str) -> ModelHost:
    """The configuration ``--host TYPE`` means: key and type are the type name, default settings."""
    host_class(host_type)
    return ModelHost(key=host_type, type=host_type, name=_DEFAULT_NAMES.get(host_type, host_type))


def create_host(config: ModelHost, embedder: Callable[[], Embedder] | None = None) -> Host:
    return host_class(config.type)(config, embedder)
