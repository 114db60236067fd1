"""Settings: one object built from ``ASSAY_*`` environment variables and an optional ``assay.toml``.

Precedence: explicit arguments > environment > ``assay.toml`` (``$ASSAY_CONFIG`` or ``./assay.toml``) > defaults.
Nested sections use ``__`` in env names, e.g. ``ASSAY_STORE__BACKEND=s3``. Secrets are ``SecretStr`` so
they never show in ``repr``, logs or dumps; ``public_dump`` is what may be written into artifacts.
"""

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from assay.models.judges import JudgeEndpoint


class StoreSettings(BaseModel):
    """Where objects live, and where the key that signs the artifact journal is found.

    ``signing_key_file`` and ``signing_key_env`` are references, never the key: the file (created on the
    first signed write when absent) or the environment variable (hex) must stay outside the store.
    """

    backend: Literal["local", "s3"] = "local"
    path: Path | None = None
    endpoint: str = ""
    bucket: str = "assay"
    access_key: SecretStr | None = None
    secret_key: SecretStr | None = None
    secure: bool = True
    region: str | None = None
    prefix: str = ""
    signing_key_file: Path | None = None
    signing_key_env: str = ""


DEFAULT_BLOCKED_NETWORKS = [
    "169.254.0.0/16",  # link-local: the metadata service of AWS, Azure, GCP, Oracle, IBM, DigitalOcean, OpenStack...
    "fe80::/10",  # IPv6 link-local
    "fd00:ec2::254/128",  # AWS instance metadata over IPv6
    "fd20:ce::254/128",  # Google Cloud metadata server over IPv6
    "fd00:c1::a9fe:a9fe/128",  # Oracle Cloud instance metadata over IPv6
    "100.100.100.200/32",  # Alibaba Cloud metadata
    "168.63.129.16/32",  # Azure's platform endpoint (WireServer: VM agent, DNS, health probes)
    "192.0.0.192/32",  # Oracle Cloud's older instance metadata address
    "::ffff:169.254.0.0/112",
    "::ffff:100.100.100.200/128",
    "::ffff:168.63.129.16/128",
    "::ffff:192.0.0.192/128",
]
"""Link-local addresses and the cloud providers' documented metadata and platform addresses (IPv4 and IPv6),
IPv4-mapped forms included: a host or judge credential must never be sent there."""


class HostsSettings(BaseModel):
    """Where hosts and judges may be reached, and how much of a reply is read (``[hosts]`` in assay.toml).

    ``blocked_networks`` (``ASSAY_HOSTS__BLOCKED_NETWORKS`` as a JSON list of CIDRs) are refused in a host or
    judge URL when the file is loaded, and again for every address a name resolves to when a connection opens;
    an IPv4 address embedded in an IPv6 one (``::ffff:a.b.c.d``, 6to4, NAT64) is matched as IPv4.
    ``max_reply_bytes`` bounds one reply (after decompression): a longer one is recorded as
    ``response_too_large`` on its case."""

    blocked_networks: list[str] = Field(default_factory=lambda: list(DEFAULT_BLOCKED_NETWORKS))
    max_reply_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    h2ogpte_python: str = ""
    """``ASSAY_HOSTS__H2OGPTE_PYTHON``: the interpreter that has the ``h2ogpte`` client (its own environment:
    it pins a websockets Prefect cannot share); empty: ``.venv-h2ogpte`` beside Assay's environment, which
    ``make install`` builds (assay/hosts/h2ogpte_process.py)."""

    @field_validator("blocked_networks")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        import ipaddress

        for value in values:
            try:
                ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise ValueError(f"{value!r} is not a network (CIDR such as 169.254.0.0/16)") from None
        return values


def default_home() -> Path:
    """One Assay home per user (``~/.assay``), whatever folder a command runs in: its caches (embeddings, topic
    models, judge verdicts) and its one kept Prefect server serve every command. ``ASSAY_HOME`` or ``home`` in
    ``assay.toml`` choose another (the project's ``make demo`` keeps its own in the checkout)."""
    return Path.home() / ".assay"


_TOML_PATHS = (("home",), ("prefect_home",), ("cache_dir",), ("models_dir",), ("store", "path"),
               ("store", "signing_key_file"))


class _TomlFileSource(TomlConfigSettingsSource):
    """``assay.toml`` with its relative paths read from the file's folder, not from the folder a command runs
    in: one file names one home, wherever it is used from."""

    def _read_files(self, files: Any, deep_merge: bool = False) -> dict[str, Any]:
        data = super()._read_files(files, deep_merge=deep_merge)
        if isinstance(files, str | Path):
            folder = Path(files).expanduser().absolute().parent
            for *sections, key in _TOML_PATHS:
                table = data
                for section in sections:
                    table = table.get(section) if isinstance(table, dict) else None
                if isinstance(table, dict) and isinstance(table.get(key), str):
                    table[key] = str(folder / Path(table[key]).expanduser())
        return data


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ASSAY_", env_nested_delimiter="__", extra="forbid")

    home: Path = Field(default_factory=default_home)
    store: StoreSettings = StoreSettings()
    prefect_home: Path | None = None
    cache_dir: Path | None = None
    models_dir: Path | None = None
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_backend: Literal["torch", "onnx", "onnx-int8"] = "torch"
    """``ASSAY_EMBEDDING_BACKEND``: ``torch`` (the reference) by default for runs. ``onnx`` / ``onnx-int8``
    are opt-in here: see ``bench/encoder.py`` for their speed and cosine deviation from torch
    (a backend may become the default only within 0.01 cosine of torch on the bench set)."""
    guardrail_embedding_backend: Literal["torch", "onnx", "onnx-int8"] = "onnx"
    """``ASSAY_GUARDRAIL_EMBEDDING_BACKEND``: the live guardrail service's encoder. ``onnx`` (fp32) by default:
    a service embeds a few short sentences per request, where ONNX Runtime takes half torch's time for the
    same vectors (within 1e-7, bench/encoder.py) and loads in under a second instead of 13 s; the model is
    converted once into the cache folder (about 10 s). A validation run embeds long batches, where torch is
    as fast, so ``embedding_backend`` stays the reference there."""
    prefect_server: Literal["keep", "temporary"] = "keep"
    """``ASSAY_PREFECT_SERVER``: without ``PREFECT_API_URL``, ``keep`` starts one local Prefect server on the
    first command and later commands reuse it (``assay server stop`` ends it, or it stops itself when idle);
    ``temporary`` lets every command start and stop Prefect's own temporary server (10-30 s each)."""
    prefect_server_port: int = 4200
    """Port of the kept server (another free port when this one is taken)."""
    prefect_server_idle_minutes: float = 60.0
    """The kept server stops after this long without a command, a running or paused flow run, or a served
    deployment."""
    prefect_server_start_timeout_s: float = 300.0
    """How long a command waits for the kept server to answer before it gives up, naming the server's log."""
    dask_address: str = ""
    """``ASSAY_DASK_ADDRESS``: a running Dask scheduler (``tcp://host:8786``) that evaluation shards run on;
    its workers need the same Assay installed and the same store and Assay home reachable."""
    dask_workers: int = Field(default=0, ge=0)
    """``ASSAY_DASK_WORKERS``: without an address, N > 0 runs shards on a local Dask cluster of N worker
    processes (one thread each); 0 with no address: no Dask, one task per evaluator."""
    shard_size: int = Field(default=250, ge=1)
    """``ASSAY_SHARD_SIZE``: test cases per shard when evaluation runs on Dask."""
    hosts: HostsSettings = HostsSettings()
    """``[hosts]``: the network policy and reply limit of every host and judge client."""
    judge: JudgeEndpoint = JudgeEndpoint()
    """The LLM judge (``ASSAY_JUDGE__BASE_URL``, ``ASSAY_JUDGE__MODEL``, ``ASSAY_JUDGE__API_KEY_ENV``...);
    nothing in the default path needs one."""

    @field_validator("home")
    @classmethod
    def _absolute_home(cls, home: Path) -> Path:
        """A relative ``ASSAY_HOME`` is fixed against the folder the command starts in, once."""
        return home.expanduser().absolute()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = Path(os.environ.get("ASSAY_CONFIG", "assay.toml"))
        return (init_settings, env_settings, _TomlFileSource(settings_cls, toml_file=toml_file))

    @property
    def store_path(self) -> Path:
        return self.store.path or self.home / "store"

    @property
    def signing_key_path(self) -> Path:
        """The signing key file; under the Assay home by default, beside (not inside) the local store."""
        return self.store.signing_key_file or self.home / "keys" / "artifact-signing.key"

    @property
    def journal_anchor_path(self) -> Path:
        """This machine's record of each store's newest journal entry, kept next to the signing key."""
        return self.signing_key_path.parent / "artifact-journal-heads.json"

    @property
    def prefect_home_path(self) -> Path:
        return self.prefect_home or self.home / "prefect"

    @property
    def models_path(self) -> Path:
        """Where model-based evaluators look up model names as folders (weights are never downloaded)."""
        return self.models_dir or self.home / "models"

    @property
    def cache_path(self) -> Path:
        return self.cache_dir or self.home / "cache"

    def public_dump(self) -> dict[str, Any]:
        """Settings with every secret removed: safe to write into artifacts and reports."""
        return self.model_dump(
            mode="json", exclude={"store": {"access_key", "secret_key"}}
        )


def load_settings(**overrides: Any) -> Settings:
    """Build settings, naming the file at fault when ``assay.toml`` is malformed. The credentials they hold
    are registered for redaction, so no error, log line or artifact can echo them."""
    from assay.redaction import register_settings_secrets

    try:
        settings = Settings(**overrides)
    except tomllib.TOMLDecodeError as error:  # a repeated key among others
        raise ValueError(f"{os.environ.get('ASSAY_CONFIG', 'assay.toml')}: not valid TOML: {error}") from None
    except ValidationError as error:
        source = os.environ.get("ASSAY_CONFIG", "assay.toml")
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" for item in error.errors()
        )
        raise ValueError(f"invalid Assay settings (environment ASSAY_* or {source}): {problems}") from None
    register_settings_secrets(settings)
    if settings.judge.base_url:  # a judge file is checked when loaded; one set in the settings is checked here
        from assay.calls.network import NetworkPolicy, url_refusal

        policy = NetworkPolicy.from_settings(settings.hosts.blocked_networks, settings.hosts.max_reply_bytes)
        if (reason := url_refusal(settings.judge.base_url, policy)) is not None:
            source = os.environ.get("ASSAY_CONFIG", "assay.toml")
            raise ValueError(f"invalid Assay settings (environment ASSAY_* or {source}): judge.base_url: {reason}")
    return settings
