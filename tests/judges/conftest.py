"""The local rule-based judge (``assay/testing/judge_server.py``) and services wired to it."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from assay.evaluators import Services

from assay.judges.client import open_judge
from assay.models import CallPolicy
from assay.models.judges import JudgeEndpoint, JudgeRunOptions
from assay.testing.judge_server import JUDGE_MODEL, JudgeServer, serve_judge

FAST = CallPolicy(concurrency=8, timeout_s=5.0, retries=2, backoff_s=0.01, max_retry_after_s=0.05)


@pytest.fixture(scope="module")
def judge_server() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer()) as running:
        yield running


def endpoint_for(server: JudgeServer, **fields: object) -> JudgeEndpoint:
    return JudgeEndpoint.model_validate({"base_url": server.url, "model": JUDGE_MODEL, "calls": FAST} | fields)


def judge_services(
    server: JudgeServer, cache_dir: Path | None, options: JudgeRunOptions | None = None, **fields: object
) -> Services:
    endpoint = endpoint_for(server, **fields)
    return Services(judge_factory=lambda: open_judge(endpoint, cache_dir), judge_options=options)
