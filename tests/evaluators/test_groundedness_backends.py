"""Groundedness backends: the packaged learned model by default, a local NLI cross-encoder when one is configured
(auto), and every result naming the backend that scored it."""

import json
import math
from pathlib import Path

import pytest
from assay.evaluators import CaseContext, Services, build_evaluator, groundedness
from assay.evaluators._groundedness_model import (
    FEATURES,
    LEXICAL_FEATURES,
    GroundednessModel,
    lexical_signals,
    packaged_model,
)
from assay.evaluators._nli import NLI_MODEL_ENV, NliBackend

from assay.embeddings import EmbeddingEngine
from tests.support.tiny_models import build_classifier

pytestmark = pytest.mark.slow
CONTEXT = ["Standard delivery is free and takes 3-5 working days. Express delivery costs £10."]
NLI_LABELS = ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


@pytest.fixture()
def no_nli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(NLI_MODEL_ENV, raising=False)
    monkeypatch.setenv("ASSAY_MODELS_DIR", str(tmp_path / "no-models"))


def _scored(services: Services, answer: str, **params: object):
    evaluator = build_evaluator("groundedness", services, **params)
    case = CaseContext.build(retrieved_context=CONTEXT, actual_output=answer)
    evaluator.prepare([case])
    return evaluator.score(case)


def test_lexical_signals_count_unknown_words_and_reward_order() -> None:
    faithful = lexical_signals("express delivery costs £10", CONTEXT)
    assert faithful["unsupported_words"] == 0.0 and faithful["ordered_overlap"] == 1.0
    swapped = lexical_signals("£10 costs express delivery", CONTEXT)
    assert swapped["unsupported_words"] == 0.0 and swapped["ordered_overlap"] < 1.0
    invented = lexical_signals("express delivery costs £10 and arrives by drone", CONTEXT)
    assert invented["unsupported_words"] == pytest.approx(-math.log1p(2))  # arrives, drone (stop words never count)
    record = lexical_signals("Luigi's is open on Monday", ["name: Luigi's", "hours monday: 16:0-21:0"])
    assert record["unsupported_words"] == pytest.approx(-math.log1p(1))  # open ("is", "on": stop words)


def test_the_packaged_model_is_a_valid_non_negative_fit() -> None:
    model = packaged_model()
    assert model.features in (LEXICAL_FEATURES, FEATURES) and all(weight >= 0 for weight in model.weights)
    document = json.loads((Path("assay/data/groundedness/model.json")).read_text(encoding="utf-8"))
    assert set(document["trained_on"]) >= {"begin_dev_wow", "q2_wow"}
    with pytest.raises(ValueError, match="field 'features'"):
        GroundednessModel.from_document({**document, "features": ["x"]}, "model.json")


def test_learned_default_separates_a_faithful_answer_from_an_invented_one(services: Services, no_nli: None) -> None:
    faithful = _scored(services, "Standard delivery is free and takes 3-5 working days.")
    invented = _scored(services, "Standard delivery takes two weeks and a courier calls you the evening before.")
    assert faithful.details["backend"] == f"offline:{packaged_model().version}"
    assert faithful.scores["groundedness"] >= 0.5 > invented.scores["groundedness"]
    assert set(faithful.details["signals"]) == set(packaged_model().features)


def test_a_model_fitted_with_entailment_reads_assay_entailment_model(
    services: Services, no_nli: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped model does not read the entailment signals (fitted with them it was no better out of set, see
    its data card); a model that declares them gets them from Assay's own entailment model, claim by claim."""
    lexical, width = packaged_model(), len(LEXICAL_FEATURES)
    document = {
        "schema_version": 1, "version": "with-entailment", "features": list(FEATURES),
        "mean": [*lexical.mean[:width], 0.5, 0.8], "scale": [*lexical.scale[:width], 0.2, 0.15],
        "weights": [*lexical.weights[:width], 1.0, 1.0], "intercept": lexical.intercept,
    }  # fmt: skip
    monkeypatch.setattr(groundedness, "packaged_model", lambda: GroundednessModel.from_document(document, "test"))
    scored = _scored(services, "Express delivery costs £10.")
    assert scored.details["entailment_backend"] == "nli:assay-entailment-v1"
    signals = scored.details["signals"]
    assert 0.0 <= signals["entailment"] <= 1.0 and 0.0 <= signals["consistency"] <= 1.0
    assert build_evaluator("groundedness", services).unavailable_reason() is None


def test_a_wrong_figure_is_capped_by_the_rule_whatever_the_wording(services: Services, no_nli: None) -> None:
    scored = _scored(services, "Express delivery costs £15.")
    assert scored.details["unsupported_figures"] == ["£15"]
    assert scored.scores["groundedness"] == 0.0


def test_a_configured_nli_model_scores_and_is_named(
    services: Services, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = build_classifier(tmp_path / "nli", NLI_LABELS, bias=[-2.0, 0.0, 2.0])  # always "entailment"
    monkeypatch.setenv(NLI_MODEL_ENV, folder)
    scored = _scored(services, "Standard delivery is free. Express delivery costs £10.")
    assert scored.details["backend"] == "nli:nli"
    expected = NliBackend.load(folder).support(["Standard delivery is free.", "Express delivery costs £10."], CONTEXT)
    assert scored.scores["groundedness"] == pytest.approx(min(s.entailment for s in expected), abs=1e-6)
    assert scored.scores["groundedness"] > 0.8 and len(scored.details["sentences"]) == 2


def test_auto_falls_back_offline_and_says_why_when_the_configured_model_is_broken(
    services: Services, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(NLI_MODEL_ENV, str(tmp_path / "missing-nli"))
    scored = _scored(services, "Standard delivery is free.")
    assert scored.details["backend"].startswith("offline:")
    assert "missing-nli" in scored.details["nli_unavailable"]


def test_backend_nli_without_a_model_is_unavailable_with_the_reason(no_nli: None) -> None:
    evaluator = build_evaluator("groundedness", backend="nli")
    reason = evaluator.unavailable_reason()
    assert reason and "\n" not in reason and "NLI" in reason
    assert build_evaluator("groundedness", backend="offline").unavailable_reason() is None
    with pytest.raises(ValueError, match="backend 'gpu' is not one of auto, nli, offline"):
        build_evaluator("groundedness", backend="gpu")
