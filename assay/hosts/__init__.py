"""Systems under test: a small host contract, a registry and the built-in hosts."""

from assay.calls.errors import HostError
from assay.hosts.base import CallPolicy, Host, HostAnswer, resolve
from assay.hosts.registry import create_host, default_host_config, host_class, host_types, register_host

__all__ = [
    "CallPolicy",
    "Host",
    "HostAnswer",
    "HostError",
    "create_host",
    "default_host_config",
    "host_class",
    "host_types",
    "register_host",
    "resolve",
]
