"""The threshold book (defaults -> user overrides -> a person's calibration) and the guardrail configuration
built from it, in the manual's JSON shape."""

import json

import pytest

from artifacts.guardrails import build_guardrail_config
from assay.models.evaluation import EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.mrm import Calibration, MetricCalibration
from assay.thresholds import threshold_book


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
            method="too few labels (3 < 6): default threshold kept",
        ),
    ],
    decided_by="person",
    reviewers=["ana"],
)



def detail(threshold: float, source: str, set_by: str, default: float, higher_is_better: bool, **more: str) -> dict:
    return {
        "threshold": threshold,
        "source": source,
        "set_by": set_by,
        "default_threshold": default,
        "higher_is_better": higher_is_better,
        "flag_when": "below" if higher_is_better else "above",
        **more,
    }


def test_a_persons_calibration_overrides_the_users_threshold_which_overrides_the_default() -> None:
    config = build_guardrail_config(threshold_book(RESULTS, CALIBRATION, "ana (prefect-ui)"))
    assert config == {
        "calibrated_thresholds": {
            "groundedness": {"groundedness": 0.62, "ungrounded_sentences": 0.2},
            "toxicity": {"toxicity": 0.25},
        },
        "evaluator_ids": ["groundedness", "toxicity"],  # latency has no threshold to guard with
        "thresholds_reviewed_by": "ana (prefect-ui)",
        "threshold_details": {
            "groundedness": {
                "groundedness": detail(0.62, "calibrated", "calibrated on 20 labels by ana (prefect-ui)", 0.75, True),
                "ungrounded_sentences": detail(0.2, "default", "evaluator default", 0.2, False),
            },
            "toxicity": {
                "toxicity": detail(
                    0.25,
                    "default",
                    "evaluator default",
                    0.25,
                    False,
                    calibration="labelled by ana (prefect-ui): too few labels (3 < 6): default threshold kept",
                )
            },
        },
    }
    reordered = build_guardrail_config(threshold_book(list(reversed(RESULTS)), CALIBRATION, "ana (prefect-ui)"))
    assert json.dumps(reordered, sort_keys=True) == json.dumps(config, sort_keys=True)


def test_unattended_runs_keep_defaults_and_user_overrides_marked_no_reviewer() -> None:
    unattended = Calibration(metrics=CALIBRATION.metrics, decided_by="no reviewer")
    book = threshold_book(RESULTS, unattended)
    assert book.reviewer == "no reviewer"
    assert {entry.source for entry in book.entries} == {"default", "user"}
    grounded = book.entry("groundedness", "groundedness")
    assert (grounded.threshold, grounded.source, grounded.set_by) == (0.7, "user", "run parameter metric_threshold")
    config = build_guardrail_config(book)
    assert config["thresholds_reviewed_by"] == "no reviewer"
    assert "calibrated" not in json.dumps(config["threshold_details"])
    assert threshold_book(RESULTS).in_force()[("groundedness", "groundedness")] == 0.7


def test_evaluator_ids_keep_only_those_and_must_name_a_guardable_evaluator() -> None:
    book = threshold_book(RESULTS)
    assert build_guardrail_config(book, evaluator_ids=["toxicity"])["calibrated_thresholds"] == {
        "toxicity": {"toxicity": 0.25}
    }
    with pytest.raises(ValueError, match="'pii' was not evaluated"):
        build_guardrail_config(book, evaluator_ids=["pii"])
    with pytest.raises(ValueError, match="'latency' has no metric with a threshold"):
        build_guardrail_config(book, evaluator_ids=["latency", "toxicity"])
