"""One threshold rule (``assay.models.thresholds.resolve_threshold``): calibrated > the user's override >
the default, whether asked of an evaluator while scoring, of a stored result, of the threshold book, of a
results.json (gates, report) or of a validity run; overrides are declared once, for every evaluator."""

import ast
from pathlib import Path

import pytest
from assay.evaluators import build_evaluator, evaluator_class, evaluator_ids

from assay.models.evaluation import EvaluationResult
from assay.models.thresholds import recorded_override, resolve_threshold
from assay.thresholds import threshold_book
from assay.validity.run import threshold_in_force

ROOT = Path(__file__).resolve().parents[1]


def test_calibrated_beats_the_user_who_beats_the_default() -> None:
    assert resolve_threshold("m", 0.5, {}) == (0.5, "default")
    assert resolve_threshold("m", 0.5, {"m": 0.7}) == (0.7, "user")
    assert resolve_threshold("m", 0.5, {"other": 0.7}) == (0.5, "default")
    assert resolve_threshold("m", 0.5, {"m": 0.7}, calibrated=0.6) == (0.6, "calibrated")
    assert resolve_threshold("m", None, {}) == (None, "default")


def test_the_override_parameters_are_declared_once_for_every_evaluator() -> None:
    declaring = []
    for path in sorted((ROOT / "evaluators").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            named = getattr(node, "target", None)
            if isinstance(node, ast.AnnAssign) and getattr(named, "id", None) in {"metric_threshold", "thresholds"}:
                declaring.append(f"{path.name}:{node.target.id}")  # type: ignore[attr-defined]
    assert declaring == ["base.py:metric_threshold", "base.py:thresholds"]
    for evaluator_id in evaluator_ids():
        names = [meta.name for meta in evaluator_class(evaluator_id).parameter_meta()]
        assert names[-2:] == ["metric_threshold", "thresholds"], evaluator_id


def test_the_primary_override_is_described_with_the_default_it_replaces() -> None:
    meta = {m.name: m for m in evaluator_class("token_count").parameter_meta()}
    assert meta["metric_threshold"].description == (
        "Overrides the default threshold (4000) of the primary metric total_token_count. "
        "Set it to the token budget of the system under test."
    )


def test_any_metric_can_be_overridden_and_the_book_says_which_parameter_did() -> None:
    evaluator = build_evaluator("rouge", metric_threshold=0.6, thresholds={"rouge_1": 0.3, "rouge_l": 0.9})
    assert evaluator.threshold("rouge_1") == 0.3
    assert evaluator.threshold("rouge_2") == evaluator.spec.metric("rouge_2").threshold
    assert evaluator.threshold("rouge_l") == 0.6  # metric_threshold names the primary metric, and wins for it

    result = EvaluationResult(evaluator=evaluator.full_spec(), parameters=evaluator.parameters(), rows=[])
    assert [result.threshold(key) for key in ("rouge_1", "rouge_2", "rouge_l")] == [
        evaluator.threshold(key) for key in ("rouge_1", "rouge_2", "rouge_l")
    ]
    assert result.threshold("rouge_1", {("rouge", "rouge_1"): 0.45}) == 0.45

    book = {(entry.metric): entry for entry in threshold_book([result]).entries}
    assert (book["rouge_1"].source, book["rouge_1"].set_by) == ("user", "run parameter thresholds.rouge_1")
    assert (book["rouge_l"].source, book["rouge_l"].set_by) == ("user", "run parameter metric_threshold")
    assert (book["rouge_2"].source, book["rouge_2"].set_by) == ("default", "evaluator default")


def test_a_results_document_names_the_parameter_that_set_a_threshold() -> None:
    document = {
        "id": "rouge",
        "parameters": [{"name": "metric_threshold", "value": None}, {"name": "thresholds", "value": {"rouge_1": 0.3}}],
        "metrics_meta": [{"key": "rouge_1"}, {"key": "rouge_l", "is_primary": True}],
    }
    assert recorded_override(document, "rouge_1", False) == "run parameter thresholds.rouge_1"
    assert recorded_override(document, "rouge_1", False, named=True) == "run parameter rouge.thresholds.rouge_1"
    assert recorded_override(document, "rouge_l", True) is None


def test_a_threshold_for_a_metric_the_evaluator_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'thresholds' names no metric\(s\) \['rouge_9'\]; its metrics are"):
        build_evaluator("rouge", thresholds={"rouge_9": 0.5})


def test_a_default_that_depends_on_a_parameter_is_not_called_the_users() -> None:
    """Rule-based groundedness has its own default; nobody set it, so a validity run says "default"."""
    evaluator = build_evaluator("groundedness", method="hybrid")
    metric = evaluator.spec.metric("groundedness")
    in_force = threshold_in_force(evaluator, metric)
    assert (in_force.value, in_force.source) == (evaluator.threshold("groundedness"), "default")
    assert in_force.value != metric.threshold

    overridden = threshold_in_force(build_evaluator("groundedness", method="hybrid", metric_threshold=0.7), metric)
    assert (overridden.value, overridden.source) == (0.7, "user")
    assert overridden.set_by.startswith("parameter metric_threshold")
