"""An MRM run's default evaluators: the recommended ones whose inputs the lab has, never a reference n-gram or
edit metric unless named."""

from assay.evaluators.registry import evaluator_ids
from assay.evaluators.selection import RECOMMENDED, run_parameters, select_evaluators, selection_keyword

from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow


def _lab(*, expected: bool, context: bool) -> TestLab:
    case = TestCase(key="c1", prompt="What does the saver pay?", expected_output="3.25% AER" if expected else "")
    row = TestLabRow(
        test_case=case,
        model_key="m",
        actual_output="The saver pays 3.25% AER.",
        context=[RetrievedChunk(text="The Easy Access Saver pays 3.25% AER.")] if context else [],
    )
    return TestLab(name="lab", models=[ModelHost(key="m", type="precomputed", name="m")], rows=[row])


def test_recommended_follows_what_the_suite_has_and_leaves_out_n_gram_metrics() -> None:
    everything, _ = select_evaluators(_lab(expected=True, context=True), ["recommended"])
    assert {"groundedness", "context_relevancy_soft", "answer_semantic_similarity", "pii_leakage"} <= set(everything)
    assert not {"bleu", "rouge", "step_alignment"} & set(everything)
    assert set(everything) <= set(RECOMMENDED)

    bare, skipped = select_evaluators(_lab(expected=False, context=False), ["recommended"])
    assert "groundedness" not in bare and "answer_semantic_similarity" not in bare
    assert "retrieved_context" in skipped["groundedness"] and "expected_output" in skipped["answer_semantic_similarity"]
    assert "pii_leakage" in bare and "answer_relevancy_sentence_similarity" in bare


def test_every_recommended_evaluator_is_registered_and_named_ones_still_run() -> None:
    assert set(RECOMMENDED) <= set(evaluator_ids())
    assert select_evaluators(_lab(expected=True, context=True), ["bleu"]) == (["bleu"], {})
    assert selection_keyword(["recommended"]) == "recommended" and selection_keyword(["all", "bleu"]) is None
    assert run_parameters(["recommended"], "json_schema") == {"check_cases_without_schema": False}


def test_the_cli_reads_recommended_like_all_and_refuses_it_among_ids() -> None:
    import pytest

    from assay.apps.cli.inputs import evaluator_ids as parse_evaluators

    assert parse_evaluators("recommended") == ["recommended"]
    with pytest.raises(ValueError, match="--evaluators recommended cannot be combined"):
        parse_evaluators("recommended,bleu")
