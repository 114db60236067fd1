"""One conformance suite over every registered evaluator (after scikit-learn's estimator checks); the rules
ship in ``assay.testing.conformance.evaluators`` for plugins written elsewhere."""

from collections.abc import Iterator

import pytest
from assay.evaluators import Services

from assay.embeddings import EmbeddingEngine
from assay.judges.client import open_judge
from assay.testing.conformance import Check, parametrize_with_checks
from assay.testing.conformance.evaluators import evaluator_checks
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import endpoint_for


@pytest.fixture(scope="module")
def judge_server() -> Iterator[JudgeServer]:
    with serve_judge(JudgeServer()) as running:
        yield running


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine, judge_server: JudgeServer, tmp_path_factory: pytest.TempPathFactory) -> Services:
    """Embeddings, and the local rule-based judge for the judged evaluators (no cache: each call is real)."""
    endpoint = endpoint_for(judge_server)
    return Services(embedder_factory=lambda: engine, judge_factory=lambda: open_judge(endpoint, None))


@parametrize_with_checks(evaluator_checks())
def test_every_evaluator_conforms(check: Check, services: Services) -> None:
    check(services)
