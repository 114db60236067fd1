"""The host contract: a spec of the type's own, valid and naming its type, and a host built from a minimal
configuration."""

from collections.abc import Iterable

from assay.hosts import create_host, default_host_config, host_class, host_types
from assay.hosts.registry import host_spec
from assay.models import HostSpec, ModelHost
from assay.testing.conformance import Check, checks_for

# Settings a type cannot do without; every other type starts from a URL and a model name alone.
REQUIRED_SETTINGS = {"http-rag": {"mapping": {"answer": "$.answer"}}}


def check_spec_is_declared_valid_and_matches_the_type(host_type: str) -> None:
    cls = host_class(host_type)
    assert "spec" in vars(cls), f"{host_type} declares no spec of its own"
    spec = host_spec(host_type)
    assert HostSpec.model_validate(spec.model_dump()) == spec
    assert spec.id == cls.type == host_type
    assert spec.display_name and spec.description and spec.protocol
    if spec.same_protocol_as is not None:
        assert spec.same_protocol_as in host_types()


def check_create_host_from_a_minimal_config(host_type: str) -> None:
    config = ModelHost(
        key="h",
        type=host_type,
        url="http://127.0.0.1:9/v1",
        llm_model_name="m",
        settings=REQUIRED_SETTINGS.get(host_type, {}),
    )
    host = create_host(config)
    assert isinstance(host, host_class(host_type)) and host.config is config
    assert default_host_config(host_type).type == host_type


RULES = (check_spec_is_declared_valid_and_matches_the_type, check_create_host_from_a_minimal_config)


def host_checks(types: Iterable[str] | None = None) -> list[Check]:
    """Every rule for the host types named (default: every registered one)."""
    return checks_for(host_types() if types is None else types, RULES)
