"""Every step default is declared once (issue 37): the library functions a step's task calls, and the review
forms its flow opens, default to the step model's value, so a second copy that drifts fails here."""

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from assay.flows.review import ReviewContext, review_calibration
from assay.flows.review_forms import StepReview, calibration_review, case_review, cluster_review, topic_review

from assay.generation import generate_suite
from assay.models import workflow  # the module, not its Test* classes: pytest would try to collect them
from assay.models.workflow import MIN_LABELS, CalibrationParameters, ReviewParameters
from assay.mrm.calibration import fit_thresholds, sample_for_review
from assay.mrm.validation import validate_suite


def _default(function: Callable[..., Any], name: str) -> object:
    return inspect.signature(function).parameters[name].default


def _step_default(model: type, name: str) -> object:
    return model.model_fields[name].default


@pytest.mark.parametrize(
    ("function", "name", "model", "field"),
    [
        (generate_suite, "per_topic", workflow.TestGenerationParameters, "per_topic"),
        (validate_suite, "outlier_z", workflow.TestValidationParameters, "outlier_z"),
        (sample_for_review, "per_metric", CalibrationParameters, "per_metric"),
        (topic_review, "per_form", ReviewParameters, "page_size"),
        (case_review, "per_form", ReviewParameters, "page_size"),
        (cluster_review, "per_form", ReviewParameters, "page_size"),
        (StepReview, "per_form", ReviewParameters, "page_size"),
        (ReviewContext, "page_size", ReviewParameters, "page_size"),
        (calibration_review, "per_form", CalibrationParameters, "answers_per_form"),
        (review_calibration, "per_form", CalibrationParameters, "answers_per_form"),
    ],
    ids=lambda value: getattr(value, "__name__", None) if callable(value) else None,
)
def test_a_library_default_is_the_step_models_default(
    function: Callable[..., Any], name: str, model: type, field: str
) -> None:
    assert _default(function, name) == _step_default(model, field)


@pytest.mark.parametrize("function", [fit_thresholds, review_calibration])
def test_the_label_floor_the_form_states_is_the_one_calibration_fits_with(function: Callable[..., Any]) -> None:
    assert _default(function, "min_labels") == MIN_LABELS
    assert f"label floor of {MIN_LABELS}" in (CalibrationParameters.model_fields["answers_per_form"].description or "")


def test_the_trace_import_command_starts_from_the_importers_defaults() -> None:
    import typer

    from assay.apps.cli.traces import import_
    from assay.traces import ImportOptions

    def shown(name: str) -> object:
        default = inspect.signature(import_).parameters[name].default
        return default.default if isinstance(default, typer.models.OptionInfo) else default

    options = ImportOptions()
    expected = {
        "format": options.format,
        "seed": options.seed,
        "stratify_by": options.stratify_by,
        "route_from": options.route_from,
        "mask_pii": options.mask_pii,
        "max_trace_spans": options.max_trace_spans,
        "max_trace_mb": options.max_trace_bytes // 2**20,
    }
    assert {name: shown(name) for name in expected} == expected
