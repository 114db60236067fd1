"""Parity with the manual (seed 002), issue 25: json_schema's invalid retrieved JSON, SummaC Conv, the GPTScore
thresholds (+inf: never a problem) and perplexity's threshold (why it is not the manual's 0.5)."""

import math
from pathlib import Path

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, build_evaluator, evaluator_class
from assay.evaluators._nli import NliBackend
from assay.evaluators._summac_conv import PERCENTILE_BINS, ConvLayers, ConvWeightsProblem, bin_edges
from assay.evaluators.runner import score_case

from assay.embeddings import EmbeddingEngine
from assay.models import RetrievedChunk
from tests.support.nli import WordOverlapNli
from tests.support.tiny_models import build_classifier

GPTSCORE = [
    "gptscore_machine_translation",
    "gptscore_question_answering",
    "gptscore_summarization_with_reference",
    "gptscore_summarization_without_reference",
]


# --- json_schema: Invalid retrieved JSON -------------------------------------------------------------------


def _json_case(*chunks: str) -> CaseContext:
    context = [RetrievedChunk(text=text, doc_uri=f"doc{index}.json", rank=index) for index, text in enumerate(chunks)]
    return CaseContext.build(actual_output='{"rate": 3.25}', retrieved_context=context)


def test_json_schema_declares_the_manuals_invalid_retrieved_json_metric() -> None:
    metric = evaluator_class("json_schema").spec.metric("model_retrieval_failures")
    assert metric.display_name == "Invalid retrieved JSON" and not metric.higher_is_better


def test_a_retrieved_json_fragment_that_does_not_parse_is_a_retrieval_failure() -> None:
    evaluator = build_evaluator("json_schema")
    cut = score_case(evaluator, _json_case('{"product": "Saver", "rate": 3.25}', '{"product": "Bond", "ra'))
    assert cut.unscored_reason is None
    assert cut.scores["model_retrieval_failures"] == 1.0 and cut.scores["model_passes"] == 1.0
    assert cut.details["retrieved_context"][0]["chunk"] == 1
    assert cut.details["retrieved_context"][0]["doc_uri"] == "doc1.json"
    fenced = score_case(evaluator, _json_case('Rates:\n```json\n{"rate": 3.25,}\n```\nas of May.'))
    assert fenced.scores["model_retrieval_failures"] == 1.0
    clean = score_case(evaluator, _json_case('{"rate": 3.25}', "Plain prose about rates { not JSON }."))
    assert clean.scores["model_retrieval_failures"] == 0.0 and "retrieved_context" not in clean.details
    without_context = score_case(evaluator, CaseContext.build(actual_output="{}"))
    assert "model_retrieval_failures" not in without_context.scores  # an LLM case has no retrieved context
    off = build_evaluator("json_schema", evaluate_retrieved_context=False)
    assert "model_retrieval_failures" not in score_case(off, _json_case('{"a": ')).scores


# --- summarization_completeness_faithfulness: SummaC Conv ---------------------------------------------------



def _save_layers(path: Path, row_weight: list[float], final_weight: list[list[float]]) -> str:
    import torch

    torch.save(
        {
            "mlp.weight": torch.tensor([row_weight]),
            "mlp.bias": torch.tensor([0.0]),
            "layer_final.weight": torch.tensor(final_weight),
            "layer_final.bias": torch.tensor([0.0, 0.0]),
        },
        path,
    )
    return str(path)


@pytest.fixture
def summarizer(tmp_path: Path, engine: EmbeddingEngine, monkeypatch: pytest.MonkeyPatch):
    folder = build_classifier(tmp_path / "nli", ["contradiction", "neutral", "entailment"])
    monkeypatch.setattr(NliBackend, "load", classmethod(lambda cls, *args, **kwargs: WordOverlapNli()))

    def build(**parameters: str):
        services = Services(embedder_factory=lambda: engine)
        return build_evaluator("summarization_completeness_faithfulness", services, model=folder, **parameters)

    return build


SOURCE = "The fee is 25 pounds. Interest is paid monthly. Branches open at nine."
SUMMARY = "Interest is paid monthly. The moon is made of cheese."


def test_summac_conv_runs_the_trained_layers_over_each_sentences_entailment_histogram(
    summarizer, tmp_path: Path
) -> None:
    # Two even bins ([0, 0.5), [0.5, 1]); the row layer counts the source sentences that entail the summary
    # sentence, the final layer's consistent logit is the mean count: "Interest..." is entailed by one of
    # three source sentences, "The moon..." by none, so the mean is 0.5 and the probability sigmoid(0.5).
    weights = _save_layers(tmp_path / "conv.bin", [0.0, 1.0], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    case = CaseContext.build(categories=["summarization"], question="Summarise.", retrieved_context=[SOURCE],
                             actual_output=SUMMARY)  # fmt: skip
    outcome = score_case(summarizer(summac_conv_weights=weights), case)
    assert outcome.unscored_reason is None
    assert outcome.scores["faithfulness_summac_conv"] == round(1 / (1 + math.exp(-0.5)), 6)
    assert outcome.scores["faithfulness_summac_zs"] == 0.5  # the same matrix, read by its maxima
    assert "faithfulness_summac_conv" not in outcome.details


def test_without_trained_layers_summac_conv_is_unscored_with_the_reason(summarizer, tmp_path: Path) -> None:
    case = CaseContext.build(categories=["summarization"], question="Summarise.", retrieved_context=[SOURCE],
                             actual_output=SUMMARY)  # fmt: skip
    unset = score_case(summarizer(), case)
    assert unset.scores["faithfulness_summac_conv"] is None and unset.scores["faithfulness_summac_zs"] == 0.5
    assert "summac_conv_weights" in unset.details["faithfulness_summac_conv"]
    missing = score_case(summarizer(summac_conv_weights=str(tmp_path / "absent.bin")), case)
    assert missing.scores["faithfulness_summac_conv"] is None
    assert "absent.bin' does not exist" in missing.details["faithfulness_summac_conv"]


def test_summac_conv_layers_must_be_one_nli_models_entailment_layers(tmp_path: Path) -> None:
    wrong = _save_layers(tmp_path / "wrong.bin", [0.0, 1.0], [[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ConvWeightsProblem, match=r"expected \(1, bins\) and \(2, 3\)"):
        ConvLayers.load(wrong)
    assert list(bin_edges(len(PERCENTILE_BINS) - 1)) == list(PERCENTILE_BINS)  # the release's percentile bins
    layers = ConvLayers(np.ones(23), 0.0, np.zeros((2, 3)), np.zeros(2))
    rows = layers.histograms(np.array([[0.995, 0.2], [0.5, 0.2]]))
    assert rows.shape == (10, 23) and rows[0].sum() == 2 and rows[2:].sum() == 0


# --- GPTScore and perplexity thresholds -------------------------------------------------------------------


@pytest.mark.parametrize("evaluator_id", GPTSCORE)
def test_gptscore_thresholds_are_the_manuals_infinity_so_no_value_is_a_problem(evaluator_id: str) -> None:
    evaluator = build_evaluator(evaluator_id)
    primary = evaluator.spec.primary_metric
    assert all(metric.threshold == math.inf for metric in evaluator.spec.metrics)
    assert primary.passes(1e6, evaluator.threshold(primary.key))
    calibrated = build_evaluator(evaluator_id, metric_threshold=2.0)
    assert not primary.passes(2.5, calibrated.threshold(primary.key))  # a calibrated threshold still reports


def test_perplexity_states_why_its_threshold_is_not_the_manuals() -> None:
    spec = evaluator_class("perplexity").full_spec()
    assert spec.primary_metric.threshold == 100.0
    assert "not the manual's 0.5" in spec.description and "at least 1" in spec.description
    parameter = next(parameter for parameter in spec.parameters if parameter.name == "metric_threshold")
    assert "100" in parameter.description
