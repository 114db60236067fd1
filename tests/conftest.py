"""Test-wide setup: everything offline, all state in a temporary Assay home, one embedding engine."""

import os
import tempfile
from pathlib import Path

_HOME = Path(tempfile.mkdtemp(prefix="assay-test-home-"))
os.environ["ASSAY_HOME"] = str(_HOME)
os.environ.pop("ASSAY_CONFIG", None)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["PREFECT_HOME"] = str(_HOME / "prefect")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("NUMBA_CACHE_DIR", str(_HOME / "numba"))

import pytest  # noqa: E402

from assay.embeddings import EmbeddingEngine, shared_engine  # noqa: E402


@pytest.fixture(scope="session")
def engine() -> EmbeddingEngine:
    """The real packaged MiniLM, loaded once for the whole session (no on-disk cache)."""
    return shared_engine()


@pytest.fixture(scope="session")
def assay_home() -> Path:
    return _HOME
