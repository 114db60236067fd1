"""``--evaluators all`` keeps only evaluators that apply to at least one answered case (issue 12).

The generic check runs every evaluator ``all`` selects over small labs of the kinds users bring (a RAG lab
without procedures, a plain LLM lab) with real embeddings and the local rule-based judge: a selected
evaluator must score at least one case, or say it is unavailable. An evaluator that hides an applicability
condition in ``score`` (instead of ``not_applicable``) fails here.
"""

from collections.abc import Iterator

import pytest
from assay.evaluators import Services, build_evaluator, run_evaluator
from assay.evaluators.selection import parameters_under_all, select_evaluators

from assay.embeddings import EmbeddingEngine
from assay.judges.client import open_judge
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from assay.testing.judge_server import JudgeServer, serve_judge
from tests.judges.conftest import endpoint_for

PROCEDURE = "To freeze a card:\n1. Open the app.\n2. Choose the card.\n3. Tap Freeze card."


def _row(key: str, context: list[str], answer: str = "The Easy Access Saver pays 3.25% AER.") -> TestLabRow:
    case = TestCase(
        key=key,
        prompt="What rate does the Easy Access Saver pay?",
        expected_output="The Easy Access Saver pays 3.25% AER on balances up to £50,000.",
        expected_retrieved_doc_uris=["kb://savings/rates"],
    )
    chunks = [RetrievedChunk(text=text, doc_uri="kb://savings/rates", rank=rank) for rank, text in enumerate(context)]
    return TestLabRow(
        test_case=case,
        model_key="rag",
        actual_output=answer,
        context=chunks,
        actual_duration=0.4,
        input_tokens=40,
        output_tokens=12,
    )


def _lab(*rows: TestLabRow) -> TestLab:
    return TestLab(name="lab", models=[ModelHost(key="rag", type="imported")], rows=list(rows))


RAG_WITHOUT_STEPS = _lab(
    _row("rate", ["The Easy Access Saver pays 3.25% AER on balances up to £50,000."]),
    _row("limit", ["Withdrawals are free and unlimited.", "Interest is paid monthly."]),
)
PLAIN_LLM = TestLab(
    name="llm",
    models=[ModelHost(key="llm", type="imported")],
    rows=[
        TestLabRow(
            test_case=TestCase(key="q", prompt="How do I greet a new customer in a polite way?"),
            model_key="llm",
            actual_output="You can say that it is a pleasure to meet them and ask how you can help.",
        )
    ],
)


def test_a_lab_without_procedures_skips_step_alignment_with_the_reason() -> None:
    selected, skipped = select_evaluators(RAG_WITHOUT_STEPS, ["all"])
    assert "step_alignment" not in selected
    assert skipped["step_alignment"].startswith("applies to no test case (no steps (numbered or bulleted list")
    assert "retrieved context" in skipped["step_alignment"]


def test_one_case_with_a_procedure_selects_step_alignment() -> None:
    lab = _lab(*RAG_WITHOUT_STEPS.rows, _row("freeze", [PROCEDURE], answer="1. Open the app.\n2. Tap Freeze card."))
    selected, skipped = select_evaluators(lab, ["all"])
    assert "step_alignment" in selected and "step_alignment" not in skipped


def test_the_cases_without_a_procedure_are_unscored_as_not_applicable(engine: EmbeddingEngine) -> None:
    lab = _lab(RAG_WITHOUT_STEPS.rows[0], _row("freeze", [PROCEDURE], answer="1. Open the app.\n2. Tap Freeze card."))
    result = run_evaluator(build_evaluator("step_alignment", Services(embedder_factory=lambda: engine)), lab)
    without, with_steps = result.rows
    assert without.unscored_reason is not None and without.unscored_reason.startswith("not applicable: no steps")
    assert with_steps.unscored_reason is None and with_steps.scores["retrieved_context_steps"] == 3.0


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Iterator[Services]:
    with serve_judge(JudgeServer()) as judge:
        endpoint = endpoint_for(judge)
        yield Services(embedder_factory=lambda: engine, judge_factory=lambda: open_judge(endpoint, None))


@pytest.mark.parametrize("lab", [RAG_WITHOUT_STEPS, PLAIN_LLM], ids=["rag-without-steps", "plain-llm"])
def test_every_evaluator_all_selects_scores_at_least_one_case(lab: TestLab, services: Services) -> None:
    selected, skipped = select_evaluators(lab, ["all"], services)
    assert selected, skipped
    never_scored = {}
    for evaluator_id in selected:
        evaluator = build_evaluator(evaluator_id, services, **parameters_under_all(evaluator_id))
        rows = run_evaluator(evaluator, lab).rows
        if all(row.unscored_reason is not None for row in rows):
            never_scored[evaluator_id] = rows[0].unscored_reason
    assert never_scored == {}
