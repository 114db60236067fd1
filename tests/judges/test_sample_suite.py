"""Every judged evaluator on the sample suite (answered by the sample RAG) against the local judge: each
scores cases with evidence, names its metrics as the seeds do, and a rerun is served from the cache."""

from pathlib import Path

import pytest
from assay.evaluators import Services, build_evaluator, evaluator_class, run_evaluator

from assay.embeddings import EmbeddingEngine
from assay.formats import import_file
from assay.hosts import default_host_config
from assay.judges.client import open_judge
from assay.labs import build_test_lab
from assay.models import TestLab
from assay.models.evaluation import EvaluationResult
from assay.testing.judge_server import JudgeServer
from bench.judges import PARAMETERS, judged_ids
from tests.judges.conftest import endpoint_for

SUITE = Path(__file__).parents[2] / "assay" / "data" / "sample_bank" / "suite.json"
NEEDS_INPUTS_THE_SAMPLE_LACKS = {"guideline_adherence": "no sample case has guidelines"}


@pytest.fixture(scope="module")
def sample_lab(engine: EmbeddingEngine) -> TestLab:
    suite = import_file(SUITE, "auto")
    return build_test_lab(suite, [default_host_config("sample-rag")], run_id="judged-sample", embedder=lambda: engine)


def test_every_judged_evaluator_scores_the_sample_suite_and_a_rerun_asks_nothing(
    sample_lab: TestLab, engine: EmbeddingEngine, judge_server: JudgeServer, tmp_path: Path
) -> None:
    endpoint = endpoint_for(judge_server)

    def judged(evaluator_id: str) -> EvaluationResult:
        services = Services(embedder_factory=lambda: engine, judge_factory=lambda: open_judge(endpoint, tmp_path))
        return run_evaluator(build_evaluator(evaluator_id, services, **PARAMETERS.get(evaluator_id, {})), sample_lab)

    first_calls = {}
    for evaluator_id in judged_ids():
        result = judged(evaluator_id)
        scored = [row for row in result.rows if row.unscored_reason is None]
        if evaluator_id in NEEDS_INPUTS_THE_SAMPLE_LACKS or evaluator_class(evaluator_id).spec.tasks:
            # the bank's Q&A declares no summarization or translation task: those judges apply to no case
            reasons = ("missing input", "not applicable")  # guideline_adherence: no guidelines, no case for it
            assert not scored and all(row.unscored_reason.startswith(reasons) for row in result.rows)
            continue
        assert scored, f"{evaluator_id}: {result.rows[0].unscored_reason}"
        assert all(row.details.get("judge") for row in scored), evaluator_id
        assert result.judge is not None and result.judge.templates, evaluator_id
        first_calls[evaluator_id] = result.judge.account.calls
    for evaluator_id in first_calls:
        result = judged(evaluator_id)
        assert result.judge is not None and result.judge.account.calls == 0, evaluator_id
    assert sum(first_calls.values()) > 1000
