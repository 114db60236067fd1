"""Host registry: host type -> class, its declared metadata, and the default configurations of the built-ins.

The built-in hosts are registered by name ("module:Class") and imported on first use: their client libraries
(openai, boto3, ollama, h2ogpte, scikit-learn for the sample retrievers) take seconds to import, and a command
that replays a test lab needs none of them. A class is validated when it is loaded, exactly as one registered
with ``register_host``; ``host_specs`` (and the conformance suite) load them all. Other packages declare host
types as entry points in the group "assay.hosts" (see ``assay.registry``)."""

from collections.abc import Callable

from pydantic import ValidationError

from assay.embeddings.engine import Embedder
from assay.hosts.base import Host
from assay.models import HostSpec, ModelHost
from assay.models.plugins import PluginOrigin, UnavailablePlugin
from assay.registry import Registry

ENTRY_POINT_GROUP = "assay.hosts"


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
    return _HOSTS.register(cls)


BUILTIN_HOSTS: dict[str, str] = {
    "sample-rag": "assay.hosts.sample_rag:SampleRag",
    "sample-rag-keyword": "assay.hosts.sample_rag:SampleRagKeyword",
    "testlab": "assay.hosts.testlab:TestLabHost",
    "openai-compatible": "assay.hosts.openai_chat:OpenAICompatible",
    "openai-chat": "assay.hosts.openai_chat:OpenAIChat",
    "http-rag": "assay.hosts.http_rag:HttpRag",
    "azure-openai": "assay.hosts.azure_openai:AzureOpenAI",
    "openai-assistants": "assay.hosts.openai_assistants:OpenAIAssistants",
    "h2ogpt": "assay.hosts.openai_chat:H2OGPT",
    "h2o-llmops": "assay.hosts.openai_chat:H2OLLMOps",
    "ollama": "assay.hosts.ollama:Ollama",
    "bedrock-kb": "assay.hosts.bedrock_kb:BedrockKnowledgeBase",
    "h2ogpte-rag": "assay.hosts.h2ogpte:H2OGPTeRAG",
    "h2ogpte-llm": "assay.hosts.h2ogpte:H2OGPTeLLM",
}
"""Built-in host type -> "module:Class", imported when the type is first used."""

_HOSTS: Registry[Host] = Registry(
    "host type",
    lambda cls: cls.type,
    _validated_spec,
    plural="types",
    builtins=BUILTIN_HOSTS,
    id_name="type",
    base=Host,
    entry_point_group=ENTRY_POINT_GROUP,
)

_DEFAULT_NAMES = {
    "sample-rag": "Sample RAG (embedding retrieval)",
    "sample-rag-keyword": "Sample RAG (keyword retrieval)",
}


def host_types() -> list[str]:
    return _HOSTS.ids()


def host_class(host_type: str) -> type[Host]:
    return _HOSTS.get(host_type)


def host_spec(host_type: str) -> HostSpec:
    """The metadata of a registered host type."""
    return host_class(host_type).host_spec()


def host_specs() -> list[HostSpec]:
    return [host_spec(host_type) for host_type in host_types()]


def host_origin(host_type: str) -> PluginOrigin:
    """The package the host type comes from: Assay, or the one whose entry point declared it."""
    return _HOSTS.origin(host_type)


def unavailable_hosts() -> list[UnavailablePlugin]:
    """Host types other packages declare that failed to import or to register, with the reason."""
    return _HOSTS.unavailable()


def default_host_config(host_type: str) -> ModelHost:
    """The configuration ``--host TYPE`` means: key and type are the type name, default settings."""
    host_class(host_type)
    return ModelHost(key=host_type, type=host_type, name=_DEFAULT_NAMES.get(host_type, host_type))


MODEL_FIELD = "llm_model_name"


def checked_host_config(config: ModelHost) -> ModelHost:
    """``config`` as a host file must give it, checked when the file is loaded (before any flow starts).

    For a host type whose spec requires the model (``llm_model_name``): a synonym the spec declares (the
    OpenAI-style ``settings.model``) is moved into ``llm_model_name``, so the lab records one field; a
    ``settings.model`` the type does not read, two different models, or no model at all is a ``ValueError``
    naming the field. Hosts still check their configuration per call (a configuration built in code)."""
    spec = host_spec(config.type)
    model = next((setting for setting in spec.settings if setting.name == MODEL_FIELD), None)
    if model is None or not model.required:
        return config
    settings = dict(config.settings)
    named = config.llm_model_name.strip()
    for synonym in dict.fromkeys([*model.synonyms, "model"]):
        if synonym not in settings:
            continue
        if synonym not in model.synonyms:
            raise ValueError(
                f"field 'settings.{synonym}' is not read by host type {config.type!r}: "
                f"give the model in field {MODEL_FIELD!r} ({model.description})"
            )
        value = settings.pop(synonym)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"field 'settings.{synonym}' (the model, same as {MODEL_FIELD!r}) must be a model name")
        if named and named != value.strip():
            raise ValueError(
                f"fields {MODEL_FIELD!r} ({named!r}) and 'settings.{synonym}' ({value.strip()!r}) name different "
                f"models; give the model once, in {MODEL_FIELD!r}"
            )
        named = value.strip()
    if not named:
        raise ValueError(
            f"field {MODEL_FIELD!r} is required for host type {config.type!r} and is missing: {model.description}"
        )
    if named == config.llm_model_name and settings == config.settings:
        return config
    return config.model_copy(update={MODEL_FIELD: named, "settings": settings})


def create_host(config: ModelHost, embedder: Callable[[], Embedder] | None = None) -> Host:
    return host_class(config.type)(config, embedder)
