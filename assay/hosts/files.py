"""Host configurations as users give them: a host type name, a ``.json``/``.toml`` host file, or the configuration
itself (a Prefect parameter). The one reader for the CLI, the flows and the deployments."""

import tomllib
from pathlib import Path
from typing import Any

from pydantic import RootModel

from assay.calls.network import check_url
from assay.formats.errors import load_json, read_text, validate
from assay.hosts.registry import checked_host_config, create_host, default_host_config, host_class
from assay.models import ModelHost, ModelPrice
from assay.models.workflow import RUN_DEFAULTS

DEFAULT_HOSTS = RUN_DEFAULTS.hosts
"""Asked when a run names no host (``RunDefaults.hosts``)."""

HostParameter = str | dict[str, Any]
"""A host type name, a host file's path, or a host configuration."""


def json_or_toml(path: Path) -> Any:
    """The data in a ``.toml`` file, else a JSON file (read strictly: repeated keys refused)."""
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(read_text(path))
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: not valid TOML: {error}") from None
    return load_json(path)


class PriceTable(RootModel[dict[str, ModelPrice]]):
    """A price table on its own (``assay traces import --prices``): model name (or ``'*'``) -> its prices, the
    shape of a host file's ``prices``."""


def read_price_table(path: Path) -> dict[str, ModelPrice]:
    """The price table in a ``.json``/``.toml`` file; errors name the file and the field."""
    return validate(PriceTable, json_or_toml(path), path).root


def read_host_file(path: Path) -> ModelHost:
    """The ``ModelHost`` in a host file, its settings checked by building the host once and its URL against
    the network policy; errors name the file and the field."""
    config = validate(ModelHost, json_or_toml(path), path)
    try:
        host_class(config.type)
        config = checked_host_config(config)
        create_host(config)
        check_url(config.url, "url")
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return config


def is_host_file(value: str) -> bool:
    return value.lower().endswith((".json", ".toml"))


def host_configs(hosts: list[HostParameter] | None) -> list[ModelHost]:
    """The configurations of the hosts a run asks (``DEFAULT_HOSTS`` when it names none)."""
    configs = []
    for host in hosts or list(DEFAULT_HOSTS):
        if isinstance(host, dict):
            configs.append(ModelHost.model_validate(host))
        elif is_host_file(host):
            configs.append(read_host_file(Path(host)))
        else:
            configs.append(default_host_config(host))
    return configs
