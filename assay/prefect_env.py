"""Prefect configuration derived from Assay settings; must run before ``prefect`` is first imported."""

import os

from assay.config import Settings
from assay.redaction import install_log_redaction


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
