"""The threshold book (defaults -> user overrides -> a person's calibration) and the guardrail configuration
built from it, in the manual's JSON shape."""

import json
from pathlib import Path

import pytest
from assay.artifacts.guardrails import build_guardrail_config

from assay.guardrail.config import parse_config
from assay.models.evaluation import EvaluationResult, EvaluatorSpec, MetricMeta
from assay.models.mrm import Calibration, CalibrationValidity, MetricCalibration, ThresholdAgreement
from assay.thresholds import threshold_book
from assay.validity.published import published_validity
from tests.validity.test_published import ENTRY, measured


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
            outcome="calibrated",
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
        "validity": {"basis": "not measured", "figures": [], "summary": "not measured against human labels"},
    }


def no_figures(evaluator_id: str, metric: str) -> list:
    return []


def test_a_persons_calibration_overrides_the_users_threshold_which_overrides_the_default() -> None:
    config = build_guardrail_config(threshold_book(RESULTS, CALIBRATION, "ana (prefect-ui)"), published=no_figures)
    assert config == {
        "calibrated_thresholds": {
            "groundedness": {"groundedness": 0.62, "ungrounded_sentences": 0.2},
            "toxicity": {"toxicity": 0.25},
        },
        "evaluator_ids": ["groundedness", "toxicity"],  # latency has no threshold to guard with
        "thresholds_reviewed_by": "ana (prefect-ui)",
        "thresholds_labelled": "23 labels by ana (prefect-ui)",
        "threshold_details": {
            "groundedness": {
                "groundedness": detail(
                    0.62,
                    "calibrated",
                    "calibrated on 20 labels by ana (prefect-ui)",
                    0.75,
                    True,
                    calibration_outcome="calibrated",
                ),
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
                    calibration_outcome="undecided",
                )
            },
        },
    }
    reordered = build_guardrail_config(
        threshold_book(list(reversed(RESULTS)), CALIBRATION, "ana (prefect-ui)"), published=no_figures
    )
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


def agreement(threshold: float, accuracy: float) -> ThresholdAgreement:
    return ThresholdAgreement(threshold=threshold, accuracy=accuracy, accuracy_low=accuracy - 0.2, accuracy_high=1.0)


def reviewed(calibrated: bool) -> CalibrationValidity:
    return CalibrationValidity(
        n=20,
        acceptable=12,
        auc=0.91,
        auc_low=0.8,
        auc_high=0.99,
        before=agreement(0.7, 0.6),
        after=agreement(0.62, 0.85) if calibrated else agreement(0.25, 0.6),
        refitted=calibrated,
        labelled_by=["Ana Lima"],
    )


def test_each_threshold_records_the_validity_figure_behind_it(tmp_path: Path) -> None:
    """Calibrated: the reviewer's figure only; labelled but kept: the reviewer's, then the published ones;
    unlabelled: the published figures; neither: "not measured"."""
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(measured(groundedness={"groundedness": [ENTRY], "ungrounded_sentences": [ENTRY]})))
    fits = [
        CALIBRATION.metrics[0].model_copy(update={"validity": reviewed(True)}),
        CALIBRATION.metrics[1].model_copy(update={"validity": reviewed(False)}),
    ]
    calibration = CALIBRATION.model_copy(update={"metrics": fits})
    config = build_guardrail_config(
        threshold_book(RESULTS, calibration, "Ana Lima"),
        calibration=calibration,
        run_id="run-7",
        published=lambda evaluator_id, metric: published_validity(evaluator_id, metric, path=path),
    )
    details = config["threshold_details"]
    calibrated = details["groundedness"]["groundedness"]["validity"]
    assert calibrated["basis"] == "reviewer labels" and len(calibrated["figures"]) == 1
    (figure,) = calibrated["figures"]
    assert figure["by"] == "reviewer labels (Ana Lima), MRM step 5, run run-7"
    assert (figure["n"], figure["auc"], figure["auc_low"], figure["auc_high"]) == (20, 0.91, 0.8, 0.99)
    assert (figure["threshold"], figure["accuracy"], figure["in_sample"]) == (0.62, 0.85, True)
    assert calibrated["summary"] == "AUC 0.910 [0.800, 0.990], n 20; reviewer labels (Ana Lima), MRM step 5, run run-7"
    published = details["groundedness"]["ungrounded_sentences"]["validity"]
    assert published["basis"] == "published" and published["figures"][0]["set"] == "begin_dev_wow"
    assert published["summary"] == (
        "AUC 0.950 [0.930, 0.970], n 430; BEGIN benchmark (Dziri et al.) (CC BY 4.0), set begin_dev_wow, "
        "held-out split; bench/validity.py, 2026-11-24"
    )
    kept = details["toxicity"]["toxicity"]["validity"]
    assert kept["basis"] == "reviewer labels" and [f["in_sample"] for f in kept["figures"]] == [False]

    unattended = Calibration(metrics=fits, decided_by="no reviewer")
    config = build_guardrail_config(threshold_book(RESULTS, unattended), calibration=unattended, published=no_figures)
    assert {detail["validity"]["basis"] for m in config["threshold_details"].values() for detail in m.values()} == {
        "not measured"
    }  # figures a policy run carries are never presented as a reviewer's


def test_the_guardrail_service_loads_the_validity_and_rejects_a_bad_one() -> None:
    results = [result("groundedness", [metric("groundedness", 0.55, primary=True)])]
    fit = CALIBRATION.metrics[0].model_copy(update={"validity": reviewed(True)})
    calibration = Calibration(metrics=[fit], decided_by="person", reviewers=["Ana Lima"])
    data = build_guardrail_config(
        threshold_book(results, calibration, "Ana Lima"), calibration=calibration, run_id="r", published=no_figures
    )
    guarded = parse_config(data, source="g.json").evaluators["groundedness"]["groundedness"]
    assert guarded.threshold == 0.62 and guarded.validity.startswith("AUC 0.910 [0.800, 0.990], n 20; reviewer labels")
    without = json.loads(json.dumps(data))
    del without["threshold_details"]["groundedness"]["groundedness"]["validity"]
    metric_ = parse_config(without, source="g.json").evaluators["groundedness"]["groundedness"]
    assert metric_.validity == "not recorded in the configuration"  # a configuration written before it existed
    figure = data["threshold_details"]["groundedness"]["groundedness"]["validity"]["figures"][0]
    for change, expected in [
        ({"basis": "guessed"}, "validity.basis: expected one of"),
        ({"figures": []}, "validity.figures: basis 'reviewer labels' with 0 figure(s)"),
        ({"figures": [{**figure, "auc": 1.2}]}, "validity.figures[0].auc: 1.2 is outside [0, 1]"),
        ({"summary": ""}, "validity.summary: expected a non-empty string"),
    ]:
        bad = json.loads(json.dumps(data))
        bad["threshold_details"]["groundedness"]["groundedness"]["validity"].update(change)
        with pytest.raises(ValueError, match=r"g\.json: threshold_details\.groundedness\.groundedness\.") as error:
            parse_config(bad, source="g.json")
        assert expected in str(error.value)


def test_a_metric_marked_not_meaningful_keeps_its_default_and_leaves_the_verdict() -> None:
    marked = CALIBRATION.model_copy(
        update={
            "metrics": [
                CALIBRATION.metrics[0],
                CALIBRATION.metrics[1].model_copy(update={"outcome": "not_meaningful", "method": "marked"}),
            ]
        }
    )
    book = threshold_book(RESULTS, marked, "ana (prefect-ui)")
    toxicity = book.entry("toxicity", "toxicity")
    assert (toxicity.threshold, toxicity.outcome, toxicity.in_verdict) == (0.25, "not_meaningful", False)
    assert book.left_out() == {"toxicity"} and book.entry("groundedness", "groundedness").in_verdict
    details = build_guardrail_config(book, published=no_figures)["threshold_details"]
    assert details["toxicity"]["toxicity"]["calibration_outcome"] == "not_meaningful"
