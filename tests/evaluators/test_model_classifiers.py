"""Toxicity, fairness bias, hallucination and summarization NLI, each scored with a tiny model built offline.

The tiny models come from ``tests.support.tiny_models``: where the exact outcome must be known, the head
ignores the text and outputs a bias set by hand.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from assay.evaluators import CaseContext, Services, Unscored, build_evaluator, run_evaluator
from assay.evaluators._nli import NliBackend
from assay.evaluators.toxicity import metric_for_label

from assay.embeddings import EmbeddingEngine
from assay.models import ModelHost, RetrievedChunk, TestCase, TestLab, TestLabRow
from tests.support.nli import WordOverlapNli
from tests.support.tiny_models import build_classifier

DETOXIFY_ORIGINAL = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value))


def lab(*rows: tuple[str, str | None, str | None]) -> TestLab:
    return TestLab(
        name="lab",
        models=[ModelHost(key="m", type="testlab")],
        rows=[
            TestLabRow(
                test_case=TestCase(key=key, prompt=f"Summarise document {key}.", categories=["summarization"]),
                model_key="m",
                actual_output=answer,
                context=[RetrievedChunk(text=context)] if context else [],
            )
            for key, answer, context in rows
        ],
    )


@pytest.fixture(scope="module")
def services(engine: EmbeddingEngine) -> Services:
    return Services(embedder_factory=lambda: engine)


# --- toxicity -------------------------------------------------------------------------------------------------


def test_toxicity_maps_detoxify_labels_and_applies_a_sigmoid_per_label(tmp_path: Path) -> None:
    bias = [2.0, -3.0, 0.0, -1.0, 1.0, 0.5]
    evaluator = build_evaluator("toxicity", model=build_classifier(tmp_path / "tox", DETOXIFY_ORIGINAL, bias=bias))
    assert evaluator.unavailable_reason() is None
    scores = evaluator.score(CaseContext.build(actual_output="Have a lovely day."))
    keys = ["toxicity", "severe_toxicity", "obscene", "threat", "insult", "identity_attack"]
    expected = dict(zip(keys, bias, strict=True))
    assert scores == {key: round(sigmoid(value), 6) for key, value in expected.items()}
    assert scores["toxicity"] == 0.880797  # sigmoid(2): multi-label, not a softmax over the six labels


def test_toxicity_reads_unbiased_label_names_in_any_order_and_leaves_absent_labels_none(tmp_path: Path) -> None:
    labels = ["insult", "toxicity", "female", "identity_attack"]
    folder = build_classifier(tmp_path / "unbiased", labels, bias=[0.0, -2.0, 5.0, 1.0])
    scores = build_evaluator("toxicity", model=folder).score(CaseContext.build(actual_output="Some text."))
    assert scores == {
        "toxicity": round(sigmoid(-2.0), 6),
        "severe_toxicity": None,
        "obscene": None,
        "threat": None,
        "insult": 0.5,
        "identity_attack": round(sigmoid(1.0), 6),
    }
    assert metric_for_label("Severe Toxicity") == "severe_toxicity" and metric_for_label("female") is None


def test_toxicity_batch_equals_one_by_one_and_long_answers_are_truncated(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path / "random", DETOXIFY_ORIGINAL, positions=32)
    answers = ["You are kind.", "I will find you and hurt you, idiot.", " ".join(["word"] * 400)]
    cases = [CaseContext.build(test_case_key=str(index), actual_output=text) for index, text in enumerate(answers)]
    together = build_evaluator("toxicity", model=folder, batch_size=2)
    together.prepare(cases)
    batched = [together.score(case) for case in cases]
    alone = [build_evaluator("toxicity", model=folder).score(case) for case in cases]
    for left, right in zip(batched, alone, strict=True):
        assert left == pytest.approx(right, abs=2e-6)
    assert batched[0]["toxicity"] != batched[1]["toxicity"]  # the head reads the text
    assert all(0.0 <= value <= 1.0 for scores in batched for value in scores.values() if value is not None)


def test_toxicity_needs_a_toxicity_label(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path / "sentiment", ["negative", "positive"])
    reason = build_evaluator("toxicity", model=folder).unavailable_reason()
    assert reason is not None and "no toxicity label" in reason and "'negative'" in reason


# --- fairness bias --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "bias"), [(["Biased", "Non-biased"], [1.0, 0.0]), (["Non-biased", "Biased"], [0.0, 1.0])]
)
def test_fairness_bias_is_the_softmax_probability_of_the_biased_label(
    tmp_path: Path, labels: list[str], bias: list[float]
) -> None:
    evaluator = build_evaluator("fairness_bias", model=build_classifier(tmp_path / "bias", labels, bias=bias))
    assert evaluator.unavailable_reason() is None
    outcome = evaluator.score(CaseContext.build(actual_output="Everyone deserves the same service."))
    assert outcome == {"fairness_bias": round(math.e / (math.e + 1.0), 6)} == {"fairness_bias": 0.731059}


def test_fairness_bias_label_is_configurable_and_checked(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path / "generic", ["LABEL_0", "LABEL_1"], bias=[0.0, 0.0])
    reason = build_evaluator("fairness_bias", model=folder).unavailable_reason()
    assert reason is not None and "no label 'Biased'" in reason and "LABEL_0" in reason
    evaluator = build_evaluator("fairness_bias", model=folder, biased_label="label_1")
    assert evaluator.score(CaseContext.build(actual_output="text")) == {"fairness_bias": 0.5}
    single = build_classifier(tmp_path / "single", ["Biased"])
    assert "no label 'Biased'" in (build_evaluator("fairness_bias", model=single).unavailable_reason() or "")


def test_tensorflow_only_weights_are_reported_not_loaded(tmp_path: Path) -> None:
    folder = tmp_path / "tf-only"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"id2label": {"0": "Biased", "1": "Non-biased"}}))
    (folder / "tf_model.h5").write_bytes(b"not really")
    reason = build_evaluator("fairness_bias", model=str(folder)).unavailable_reason()
    assert reason is not None and "tf_model.h5" in reason and "from_tf=True" in reason


# --- hallucination --------------------------------------------------------------------------------------------


def test_hallucination_scores_the_context_answer_pair_with_a_cross_encoder(tmp_path: Path) -> None:
    evaluator = build_evaluator(
        "hallucination", model=build_classifier(tmp_path / "hhem", ["LABEL_0"], bias=[1.5], positions=32)
    )
    assert evaluator.unavailable_reason() is None
    long_context = ["The saver pays 3.25% AER. " * 100, "Withdrawals are free."]
    case = CaseContext.build(retrieved_context=long_context, actual_output="It pays 3.25% AER.")
    outcome = evaluator.score(case)
    assert outcome.scores == {"hallucination": round(sigmoid(1.5), 6)} == {"hallucination": 0.817574}
    assert outcome.details == {"backend": "nli:hhem"}


def test_hallucination_batches_pairs_and_accepts_nli_models_only(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path / "random", ["LABEL_0"])
    cases = [
        CaseContext.build(test_case_key="a", retrieved_context=["The fee is £25."], actual_output="The fee is £25."),
        CaseContext.build(test_case_key="b", retrieved_context=["The fee is £25."], actual_output="There is no fee."),
    ]
    together = build_evaluator("hallucination", model=folder)
    together.prepare(cases)
    batched = [together.score(case).scores["hallucination"] for case in cases]
    alone = [build_evaluator("hallucination", model=folder).score(case).scores["hallucination"] for case in cases]
    assert batched == pytest.approx(alone, abs=2e-6) and batched[0] != batched[1]
    nli = build_classifier(tmp_path / "nli", ["contradiction", "neutral", "entailment"], bias=[0.0, 0.0, 2.0])
    evaluator = build_evaluator("hallucination", model=nli)
    assert evaluator.unavailable_reason() is None
    outcome = evaluator.score(cases[0])
    assert outcome.scores == {"hallucination": round(math.exp(2.0) / (math.exp(2.0) + 2.0), 6)}
    assert outcome.details == {"backend": "nli:nli"}
    generic = build_classifier(tmp_path / "generic", ["LABEL_0", "LABEL_1", "LABEL_2"])
    assert "no entailment label" in (build_evaluator("hallucination", model=generic).unavailable_reason() or "")


def test_models_that_need_their_own_code_are_refused(tmp_path: Path) -> None:
    folder = Path(build_classifier(tmp_path / "custom", ["LABEL_0"]))
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"auto_map": {"AutoConfig": "custom.Config"}}))
    reason = build_evaluator("hallucination", model=str(folder)).unavailable_reason()
    assert reason is not None and "auto_map" in reason


# --- summarization (completeness and faithfulness) --------------------------------------------------------------


NO_CONV = "SummaC Conv unavailable: no trained layers configured (parameter summac_conv_weights)"


def test_summac_zs_matrix_and_completeness_of_the_faithful_part(
    tmp_path: Path, services: Services, engine: EmbeddingEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = build_classifier(tmp_path / "nli", ["contradiction", "neutral", "entailment"])
    monkeypatch.setattr(NliBackend, "load", classmethod(lambda cls, *args, **kwargs: WordOverlapNli()))
    source = "The fee is 25 pounds. Interest is paid monthly. Branches open at nine."
    summary = "Interest is paid monthly. The moon is made of cheese."
    case = CaseContext.build(question="Summarise.", retrieved_context=[source], actual_output=summary)
    outcome = build_evaluator("summarization_completeness_faithfulness", services, model=folder).score(case)
    scores = outcome.scores
    assert outcome.details == {"backend": "nli:word-overlap", "faithfulness_summac_conv": NO_CONV}
    source_vectors = engine.embed(["The fee is 25 pounds.", "Interest is paid monthly.", "Branches open at nine."])
    centroid = source_vectors.mean(axis=0) / np.linalg.norm(source_vectors.mean(axis=0))
    faithful = engine.embed(["Interest is paid monthly."])[0]
    assert scores["faithfulness_summac_zs"] == pytest.approx((0.9 + 0.1) / 2)
    assert scores["completeness"] == pytest.approx(float(np.clip(centroid @ faithful, 0, 1)), abs=1e-6)
    unfaithful = CaseContext.build(question="Summarise.", retrieved_context=[source], actual_output="Cats can fly.")
    evaluator = build_evaluator("summarization_completeness_faithfulness", services, model=folder)
    assert evaluator.score(unfaithful).scores == {
        "completeness": 0.0, "faithfulness_summac_zs": 0.1, "faithfulness_summac_conv": None,  # no Conv layers given
    }  # fmt: skip


def test_summarization_with_a_real_tiny_nli_model_and_source_choice(tmp_path: Path, services: Services) -> None:
    folder = build_classifier(tmp_path / "nli", ["contradiction", "neutral", "entailment"], bias=[0.0, 0.0, 2.0])
    entail = math.exp(2.0) / (math.exp(2.0) + 2.0)
    evaluator = build_evaluator("summarization_completeness_faithfulness", services, model=folder)
    assert evaluator.unavailable_reason() is None
    case = CaseContext.build(question="Rates rose. Prices fell.", actual_output="Rates rose. Prices fell.")
    outcome = evaluator.score(case)
    scores = outcome.scores
    assert outcome.details == {"backend": "nli:nli", "faithfulness_summac_conv": NO_CONV}
    assert scores["faithfulness_summac_zs"] == round(entail, 6)
    assert scores["completeness"] == pytest.approx(1.0, abs=1e-6)  # every sentence faithful, same sentences
    strict = build_evaluator(
        "summarization_completeness_faithfulness", services, model=folder, source="retrieved_context"
    )
    with pytest.raises(Unscored, match="source to summarise"):
        strict.score(case)
    with pytest.raises(ValueError, match="parameter source must be one of"):
        build_evaluator("summarization_completeness_faithfulness", source="expected_output")
    generic = build_classifier(tmp_path / "generic", ["LABEL_0", "LABEL_1", "LABEL_2"])
    reason = build_evaluator("summarization_completeness_faithfulness", model=generic).unavailable_reason()
    assert reason is not None and "no entailment label" in reason and "LABEL_2" in reason
    named = build_evaluator(
        "summarization_completeness_faithfulness", services, model=generic, entailment_label="label_2"
    )
    assert named.unavailable_reason() is None


# --- shared: lookup by name, unavailable weights ----------------------------------------------------------------


def test_a_model_name_resolves_under_assay_models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_classifier(tmp_path / "acme" / "tiny-toxic", DETOXIFY_ORIGINAL, bias=[0.0] * 6)
    monkeypatch.setenv("ASSAY_MODELS_DIR", str(tmp_path))
    evaluator = build_evaluator("toxicity", model="acme/tiny-toxic")
    assert evaluator.unavailable_reason() is None
    assert evaluator.score(CaseContext.build(actual_output="Hello."))["toxicity"] == 0.5


MODEL_EVALUATORS = [
    "toxicity",
    "fairness_bias",
    "hallucination",
    "perplexity",
    "summarization_completeness_faithfulness",
]


@pytest.mark.parametrize("evaluator_id", MODEL_EVALUATORS)
def test_missing_weights_leave_every_case_unscored_naming_the_model(
    evaluator_id: str, tmp_path: Path, services: Services
) -> None:
    absent = tmp_path / "no-such-model"
    evaluator = build_evaluator(evaluator_id, services, model=str(absent))
    reason = evaluator.unavailable_reason()
    assert reason is not None and str(absent) in reason and "never downloads" in reason
    result = run_evaluator(evaluator, lab(("a", "Fine answer.", "Some context."), ("b", "Other answer.", "More.")))
    assert [row.unscored_reason for row in result.rows] == [reason, reason]
    assert all(row.scores == {} for row in result.rows)
    assert all(aggregate.scored == 0 for aggregate in result.aggregates["m"].values())


def test_a_full_run_scores_every_case_once(tmp_path: Path) -> None:
    folder = build_classifier(tmp_path / "tox", DETOXIFY_ORIGINAL, bias=[-4.0] * 6)
    result = run_evaluator(
        build_evaluator("toxicity", model=folder), lab(("a", "One.", None), ("b", "Two.", None), ("c", None, None))
    )
    assert [row.unscored_reason for row in result.rows] == [None, None, "missing input: actual_output"]
    assert result.aggregates["m"]["toxicity"].passed == 2
    assert result.aggregates["m"]["toxicity"].mean == round(sigmoid(-4.0), 6)
