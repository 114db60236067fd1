"""The guardrail configuration in the manual's JSON shape, from a hand-made calibration and evaluation results."""

import json

import pytest

from artifacts.guardrails import build_guardrail_config
from assay.models.evaluation import EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.mrm import Calibration, MetricCalibration


def result(evaluator_id: str, metrics: list[MetricMeta], **parameters: float) -> EvaluationResult:
    spec = EvaluatorSpec(
        id=evaluator_id,
        display_name=evaluator_id,
        description="d",
        domain="generation",
        required_inputs=["actual_output"],
        metrics=metrics,
    )
    return EvaluationResult(evaluator=spec, parameters=parameters, rows=[])


def metric(key: str, threshold: float | None, *, higher_is_better: bool = True, primary: bool = False) -> MetricMeta:
    return MetricMeta(
        key=key,
        display_name=key,
        description="d",
        threshold=threshold,
        higher_is_better=higher_is_better,
        is_primary=primary,
    )


RESULTS = [
    result("toxicity", [metric("toxicity", 0.25, higher_is_better=False, primary=True)]),
    result(
        "groundedness",
        [metric("groundedness", 0.75, primary=True), metric("ungrounded_sentences", 0.2, higher_is_better=False)],
        metric_threshold=0.7,
    ),
    result("latency", [metric("seconds", None, higher_is_better=False, primary=True)]),
]
CALIBRATION = Calibration(
    metrics=[
        MetricCalibration(
            evaluator_id="groundedness",
            metric="groundedness",
            higher_is_better=True,
            default_threshold=0.7,
            calibrated_threshold=0.62,
            labels=20,
            agreement_before=0.6,
            agreement_after=0.85,
            stable=True,
        ),
        MetricCalibration(
            evaluator_id="toxicity",
            metric="toxicity",
            higher_is_better=False,
            default_threshold=0.25,
            calibrated_threshold=None,
            labels=3,
            agreement_before=1.0,
            agreement_after=None,
            stable=False,
        ),
    ]
)


def detail(threshold: float, source: str, default: float, higher_is_better: bool) -> dict:
    return {
        "threshold": threshold,
        "source": source,
        "default_threshold": default,
        "higher_is_better": higher_is_better,
        "flag_when": "below" if higher_is_better else "above",
    }


def test_calibrated_where_available_else_default_in_the_manuals_shape() -> None:
    config = build_guardrail_config(CALIBRATION, RESULTS)
    assert config == {
        "calibrated_thresholds": {
            "groundedness": {"groundedness": 0.62, "ungrounded_sentences": 0.2},
            "toxicity": {"toxicity": 0.25},
        },
        "evaluator_ids": ["groundedness", "toxicity"],  # latency has no threshold to guard with
        "threshold_details": {
            "groundedness": {
                "groundedness": detail(0.62, "calibrated", 0.7, True),  # default: the run's metric_threshold
                "ungrounded_sentences": detail(0.2, "default", 0.2, False),
            },
            "toxicity": {"toxicity": detail(0.25, "default", 0.25, False)},
        },
    }
    assert list(config) == ["calibrated_thresholds", "evaluator_ids", "threshold_details"]
    assert json.dumps(build_guardrail_config(CALIBRATION, list(reversed(RESULTS)))) == json.dumps(config)


def test_without_calibration_the_defaults_are_used() -> None:
    config = build_guardrail_config(None, RESULTS, evaluator_ids=["toxicity"])
    assert config["calibrated_thresholds"] == {"toxicity": {"toxicity": 0.25}}
    assert config["evaluator_ids"] == ["toxicity"]


def test_calibrated_evaluator_missing_from_the_results_is_kept() -> None:
    config = build_guardrail_config(CALIBRATION, [])
    assert config["calibrated_thresholds"] == {"groundedness": {"groundedness": 0.62}, "toxicity": {"toxicity": 0.25}}


def test_evaluator_ids_must_name_a_guardable_evaluator() -> None:
    with pytest.raises(ValueError, match="'pii' was neither evaluated nor calibrated"):
        build_guardrail_config(CALIBRATION, RESULTS, evaluator_ids=["pii"])
    with pytest.raises(ValueError, match="'latency' has no metric with a threshold"):
        build_guardrail_config(CALIBRATION, RESULTS, evaluator_ids=["latency", "toxicity"])
