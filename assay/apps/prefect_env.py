"""Prefect configuration derived from Assay settings; must run before ``prefect`` is first imported."""

import os
from typing import TYPE_CHECKING

from assay.config import Settings
from assay.redaction import install_log_redaction

if TYPE_CHECKING:
    from assay.apps.prefect_server import KeptServer


def configure_prefect(settings: Settings) -> None:
    """Keep Prefect's state inside Assay's home and keep it quiet and offline, unless the user set otherwise;
    every log record the process makes (Prefect's too) has registered secrets redacted."""
    install_log_redaction()
    home = settings.prefect_home_path.resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PREFECT_HOME", str(home))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY", "false")
    os.environ.setdefault("PREFECT_RESULTS_PERSIST_BY_DEFAULT", "true")
    # The temporary server a command starts when none is configured can take over a minute on a busy machine.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    numba_cache = settings.cache_path.resolve() / "numba"
    numba_cache.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(numba_cache))


def connect_prefect(settings: Settings) -> "KeptServer | None":
    """``configure_prefect``, then the server the command's flows report to: the user's (``PREFECT_API_URL``
    or the active Prefect profile), else Assay's kept local server (found or started now, not waited for:
    call ``.wait()`` before the first flow), else (``ASSAY_PREFECT_SERVER=temporary``) None, and Prefect
    starts its temporary server for this command."""
    from assay.apps.prefect_server import configured_api_url, ensure_server

    configure_prefect(settings)
    if configured_api_url() is not None or settings.prefect_server == "temporary":
        return None
    return ensure_server(
        port=settings.prefect_server_port,
        idle_minutes=settings.prefect_server_idle_minutes,
        timeout_s=settings.prefect_server_start_timeout_s,
    )
